#!/usr/bin/env node
// Run by `npm install` (postinstall) right after patch-package has applied patches/zookeeper+7.3.0.patch.
//
// The patch adds `a_create_acl` to the native ZooKeeper addon: a create that carries the node's ACL
// in the same request. The addon was compiled by its own install script before the patch was
// applied, so it is compiled again here (only the one patched source file; make skips the C
// client). When the compiled addon already has the method, there is nothing to do.
'use strict';
const { execFileSync } = require('node:child_process');
const { dirname, join } = require('node:path');

const addonDir = dirname(require.resolve('zookeeper/package.json'));

function addonHasCreateWithAcl() {
  // A child process, so this process never holds the old binary while it is replaced.
  const probe = `process.exit(typeof require('node-gyp-build')(${JSON.stringify(addonDir)}).ZooKeeper.prototype.a_create_acl === 'function' ? 0 : 1)`;
  try {
    execFileSync(process.execPath, ['-e', probe], { cwd: addonDir, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (addonHasCreateWithAcl()) process.exit(0);

// npm passes its own node-gyp to install scripts; outside npm, use the one npm ships with.
const nodeGyp =
  process.env.npm_config_node_gyp || join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
console.error('zk-plan: compiling the patched zookeeper addon (create with ACL)');
execFileSync(process.execPath, [nodeGyp, 'build'], { cwd: addonDir, stdio: 'inherit' });
if (!addonHasCreateWithAcl()) {
  console.error('zk-plan: the zookeeper addon still lacks a_create_acl after the build: is patches/zookeeper+7.3.0.patch applied?');
  process.exit(1);
}
