#!/usr/bin/env node
// Run by `npm install` (postinstall) right after patch-package has applied patches/zookeeper+7.3.0.patch.
//
// The patch changes the native ZooKeeper addon (its header comments say why): `a_create_acl`, a
// create that carries the node's ACL in the same request, and a fix for an abort of the whole
// process when a call's send fails on a connection the server closed. The addon was compiled by its
// own install script before the patch was applied, so it is compiled again here (only the one
// patched source file; make skips the C client). The patched build says which changes it carries in
// ZooKeeper.ZK_PLAN_PATCH_LEVEL; when the compiled addon already has this level, there is nothing to do.
'use strict';
const { execFileSync } = require('node:child_process');
const { dirname, join } = require('node:path');

const addonDir = dirname(require.resolve('zookeeper/package.json'));

/** The level patches/zookeeper+7.3.0.patch sets (ZK_PLAN_PATCH_LEVEL in its node-zk.cpp). */
const PATCH_LEVEL = 2;

function addonIsPatched() {
  // A child process, so this process never holds the old binary while it is replaced.
  const probe = `process.exit(require('node-gyp-build')(${JSON.stringify(addonDir)}).ZooKeeper.ZK_PLAN_PATCH_LEVEL === ${PATCH_LEVEL} ? 0 : 1)`;
  try {
    execFileSync(process.execPath, ['-e', probe], { cwd: addonDir, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (addonIsPatched()) process.exit(0);

// npm passes its own node-gyp to install scripts; outside npm, use the one npm ships with.
const nodeGyp =
  process.env.npm_config_node_gyp ||
  join(
    dirname(process.execPath),
    '..',
    'lib',
    'node_modules',
    'npm',
    'node_modules',
    'node-gyp',
    'bin',
    'node-gyp.js',
  );
console.error('zk-plan: compiling the patched zookeeper addon');
execFileSync(process.execPath, [nodeGyp, 'build'], { cwd: addonDir, stdio: 'inherit' });
if (!addonIsPatched()) {
  console.error(
    `zk-plan: the zookeeper addon is not at patch level ${PATCH_LEVEL} after the build: is patches/zookeeper+7.3.0.patch applied?`,
  );
  process.exit(1);
}
