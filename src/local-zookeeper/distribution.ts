/**
 * Finds an Apache ZooKeeper distribution (classpath, with an SLF4J binding so
 * the server logs) and the `java` executable to run it with.
 */
import { accessSync, constants as fsConstants, existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ZOOKEEPER_INSTALL_HINT, ZooKeeperNotFoundError } from '../errors/server-errors.js';

const DEBIAN_ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
const DEBIAN_ZOOKEEPER_CONF = '/etc/zookeeper/conf';
const SLF4J_SIMPLE_JAR = '/usr/share/java/slf4j-simple.jar';

/** Where the ZooKeeper classes and the `java` executable are. */
export interface ZooKeeperDistribution {
  readonly classpath: string[];
  readonly javaExecutable: string;
}

/**
 * Finds a ZooKeeper distribution and Java.
 *
 * Looks at `$ZOOKEEPER_HOME` first (its `lib/*.jar`, a zookeeper jar at its
 * root when there is one, and `$ZOOKEEPER_HOME/conf`), then at Debian's
 * `/usr/share/java/zookeeper.jar` + `/etc/zookeeper/conf`. Adds
 * slf4j-simple when the classpath has no SLF4J binding, so the server logs.
 * Java is `$JAVA_HOME/bin/java` if that exists, else `java` on PATH.
 *
 * @param env - environment to read; default `process.env`
 * @throws ZooKeeperNotFoundError saying how to install what is missing
 */
export function findZooKeeperDistribution(
  env: NodeJS.ProcessEnv = process.env,
): ZooKeeperDistribution {
  const javaExecutable = findJava(env);
  const classpath = zookeeperHomeClasspath(env.ZOOKEEPER_HOME) ?? debianClasspath();
  if (classpath === undefined) {
    throw new ZooKeeperNotFoundError(
      `No Apache ZooKeeper distribution found (${describeZooKeeperHome(env.ZOOKEEPER_HOME)}; ` +
        `${DEBIAN_ZOOKEEPER_JAR} does not exist). ${ZOOKEEPER_INSTALL_HINT}` +
        (javaExecutable === undefined ? ` Java is missing too: ${JAVA_MISSING}` : ''),
    );
  }
  if (javaExecutable === undefined) {
    throw new ZooKeeperNotFoundError(`ZooKeeper was found but Java was not: ${JAVA_MISSING}`);
  }
  return { classpath: withLoggingBinding(classpath), javaExecutable };
}

// ---------------------------------------------------------------------------
// Locating ZooKeeper and Java
// ---------------------------------------------------------------------------

const JAVA_MISSING =
  'no `java` on PATH (nor $JAVA_HOME/bin/java). Install it with ' +
  '`apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y default-jre-headless` ' +
  '(installing the `zookeeper` package brings it in too).';

const ZOOKEEPER_JAR = /^zookeeper(-\d[\w.-]*)?\.jar$/;
const SLF4J_BINDING_JAR =
  /^(logback-classic|slf4j-(simple|log4j12|reload4j|jdk14|nop))[\w.-]*\.jar$/;

function zookeeperHomeClasspath(home: string | undefined): string[] | undefined {
  if (home === undefined || home === '' || !isDirectory(home)) return undefined;
  const libJars = jarsIn(join(home, 'lib'));
  const rootJars = jarsIn(home).filter((jar) => ZOOKEEPER_JAR.test(baseName(jar)));
  const hasServerJar = [...libJars, ...rootJars].some((jar) => ZOOKEEPER_JAR.test(baseName(jar)));
  if (!hasServerJar) return undefined;
  return [join(home, 'conf'), ...rootJars, ...libJars];
}

function debianClasspath(): string[] | undefined {
  // The Debian jar's manifest Class-Path lists its dependencies in /usr/share/java.
  return existsSync(DEBIAN_ZOOKEEPER_JAR)
    ? [DEBIAN_ZOOKEEPER_CONF, DEBIAN_ZOOKEEPER_JAR]
    : undefined;
}

function describeZooKeeperHome(home: string | undefined): string {
  if (home === undefined || home === '') return 'ZOOKEEPER_HOME is not set';
  return `ZOOKEEPER_HOME=${home} holds no zookeeper-*.jar in it or in its lib/`;
}

/** Without an SLF4J binding ZooKeeper logs nothing; slf4j-simple writes to stderr, i.e. our log file. */
function withLoggingBinding(classpath: string[]): string[] {
  const hasBinding = classpath.some((entry) => SLF4J_BINDING_JAR.test(baseName(entry)));
  return hasBinding || !existsSync(SLF4J_SIMPLE_JAR) ? classpath : [...classpath, SLF4J_SIMPLE_JAR];
}

function findJava(env: NodeJS.ProcessEnv): string | undefined {
  const candidates = [
    ...(env.JAVA_HOME ? [join(env.JAVA_HOME, 'bin', 'java')] : []),
    ...(env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, 'java')),
  ];
  return candidates.find(isExecutableFile);
}

function jarsIn(dir: string): string[] {
  if (!isDirectory(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jar'))
    .sort()
    .map((name) => join(dir, name));
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
