#!/usr/bin/env bash
# Idempotent project set-up, run before the examples and the tests:
#   (a) npm dependencies (npm ci when node_modules is missing or older than package-lock.json or a
#       patch in patches/),
#   (b) an Apache ZooKeeper distribution ($ZOOKEEPER_HOME, else Debian's `zookeeper` package),
#   (c) a working `java`,
#   (d) Debian's chromium for the browser test.
# Prints one line when there is nothing to do.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly DEBIAN_ZOOKEEPER_JAR=/usr/share/java/zookeeper.jar
readonly INSTALL_HINT="Install ZooKeeper with: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y zookeeper
(as root; it brings Java too), or set ZOOKEEPER_HOME to an unpacked Apache ZooKeeper 3.8 distribution."

done_steps=()

can_apt_install() {
  [[ ${EUID} -eq 0 ]] && command -v apt-get >/dev/null 2>&1
}

apt_install() {
  echo "setup: installing $* with apt-get" >&2
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"
  done_steps+=("apt-get install $*")
}

# --- (a) npm dependencies ----------------------------------------------------
npm_dependencies_stale() {
  [[ -d node_modules ]] || return 0
  # npm writes node_modules/.package-lock.json on every install; it is the best "installed at" stamp.
  local stamp=node_modules/.package-lock.json
  [[ -e ${stamp} ]] || stamp=node_modules
  [[ package-lock.json -nt ${stamp} ]] && return 0
  # A changed patch of a dependency (patches/, applied by postinstall) needs the install again too.
  local patch
  for patch in patches/*.patch; do
    [[ ${patch} -nt ${stamp} ]] && return 0
  done
  return 1
}

if npm_dependencies_stale; then
  echo "setup: running npm ci (the zookeeper client compiles natively, ~30 s)" >&2
  npm ci --no-audit --no-fund
  touch node_modules/.package-lock.json
  done_steps+=("npm ci")
fi

# --- (b) ZooKeeper distribution ----------------------------------------------
# Same rules as findZooKeeperDistribution() in src/local-zookeeper/distribution.ts.
zookeeper_home_valid() {
  local home=${ZOOKEEPER_HOME:-}
  [[ -n ${home} && -d ${home} ]] || return 1
  compgen -G "${home}/lib/zookeeper-[0-9]*.jar" >/dev/null ||
    compgen -G "${home}/zookeeper-[0-9]*.jar" >/dev/null ||
    [[ -f ${home}/lib/zookeeper.jar || -f ${home}/zookeeper.jar ]]
}

zookeeper_location() {
  if zookeeper_home_valid; then
    echo "ZOOKEEPER_HOME=${ZOOKEEPER_HOME}"
  elif [[ -f ${DEBIAN_ZOOKEEPER_JAR} ]]; then
    echo "${DEBIAN_ZOOKEEPER_JAR}"
  else
    return 1
  fi
}

if ! zookeeper_location >/dev/null; then
  if can_apt_install; then
    apt_install zookeeper
  else
    echo "setup: no ZooKeeper distribution found (ZOOKEEPER_HOME unset or invalid, ${DEBIAN_ZOOKEEPER_JAR} missing)." >&2
    echo "${INSTALL_HINT}" >&2
    exit 1
  fi
fi
zookeeper_at=$(zookeeper_location) || {
  echo "setup: ZooKeeper is still missing after installing it. ${INSTALL_HINT}" >&2
  exit 1
}

# --- (c) Java ------------------------------------------------------------------
java_bin() {
  if [[ -n ${JAVA_HOME:-} && -x ${JAVA_HOME}/bin/java ]]; then echo "${JAVA_HOME}/bin/java"; else echo java; fi
}

if ! "$(java_bin)" -version >/dev/null 2>&1; then
  if can_apt_install; then
    apt_install default-jre-headless
  fi
  if ! "$(java_bin)" -version >/dev/null 2>&1; then
    echo "setup: \`java -version\` fails: no working Java on PATH (nor \$JAVA_HOME/bin/java)." >&2
    echo "Install it with: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y default-jre-headless" >&2
    exit 1
  fi
fi
java_version=$("$(java_bin)" -version 2>&1 | head -n 1)

# --- (d) Chromium, for the web view's browser test (skip with ZK_PLAN_SKIP_BROWSER=1) ---------
if [[ ${ZK_PLAN_SKIP_BROWSER:-0} != 1 && ! -x /usr/bin/chromium ]]; then
  if can_apt_install; then
    apt_install chromium
  else
    echo "setup: /usr/bin/chromium is missing; the browser test needs it: apt-get install -y chromium (as root)" >&2
  fi
fi

if [[ ${#done_steps[@]} -eq 0 ]]; then
  echo "setup: ok (npm dependencies up to date; ZooKeeper: ${zookeeper_at}; ${java_version})"
else
  echo "setup: done ($(IFS=';'; echo "${done_steps[*]}"); ZooKeeper: ${zookeeper_at}; ${java_version})"
fi
