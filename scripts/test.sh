#!/usr/bin/env bash
# The whole test suite, as the README's test command and CI run it: set-up, type check, then
# unit tests (test/) and integration tests against real ZooKeeper servers (integ/).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh || exit 1
npx tsc --noEmit -p tsconfig.json || { echo "typecheck: 0 passed, 1 failed"; exit 1; }
mkdir -p test-output
npx vitest run "$@"
status=$?
node scripts/print-test-summary.mjs test-output/vitest-report.json || status=1
exit "${status}"
