#!/usr/bin/env bash
# The whole test suite, as the README's test command and CI run it: set-up, static checks, then the
# unit tests (test/, in-memory ZooKeeper, with line coverage: src/worker, src/plan and src/store must
# each stay at or above 80 %, see vitest.config.ts), then the integration tests against real
# ZooKeeper servers (integ/) with the seeded simulations (test/, in-memory ZooKeeper, without
# coverage) running beside them.
# Each run writes its JSON report; print-test-summary.mjs adds them up into the one closing line and
# checks the coverage floor.
#
# Arguments are passed to every vitest run (e.g. a name filter: -t 'retry'); with arguments the
# coverage floor is not checked, since a filtered run covers only part of the code.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh || exit 1
# The static checks run side by side (each is single-threaded; on two cores this halves their
# time), each into its own log, printed when it fails:
# - tsc on three programs: the server side (Node), the web view's browser code and its tests (the DOM library);
# - eslint's guard rails: promises neither awaited nor handled, promises where a callback's result
#   is ignored, type imports written as values (eslint.config.js);
# - dpdm: no import cycle in src/, types included;
# - prettier: the formatter's layout (.prettierrc.json; `npm run format` fixes what it reports);
# - docs: every relative link and #anchor of README.md, CONTRIBUTING.md and docs/ resolves
#   (scripts/check-docs.mjs; it reads files only, so it costs well under a second);
# - api: the API reports of the entry points (api/*.api.md, API Extractor) match the exports, so a
#   changed export is a visible diff (`npm run api` rewrites them) and an unexpected one fails;
# - apidocs: the API reference builds (TypeDoc, docs/api/) with every export documented and every
#   {@link} resolved.
checks_dir=$(mktemp -d)
trap 'rm -rf "${checks_dir}"' EXIT
typecheck() {
  local project
  for project in tsconfig.json src/ui/browser/tsconfig.json test/browser/tsconfig.json; do
    npx tsc --noEmit -p "${project}" || { echo "typecheck (${project}) failed"; return 1; }
  done
}
declare -A check_names=([typecheck]=typecheck [lint]='npx eslint .' [cycles]="npx dpdm --no-warning --no-tree --exit-code circular:1 'src/**/*.ts'" [format]='npx prettier --check --log-level warn .' [docs]='node scripts/check-docs.mjs' [api]='npx tsx scripts/api-report.ts' [apidocs]='npx typedoc --logLevel Warn')
declare -A check_pids=()
for check in typecheck lint cycles format docs api apidocs; do
  bash -c "$(declare -f typecheck); ${check_names[${check}]}" >"${checks_dir}/${check}.log" 2>&1 &
  check_pids[${check}]=$!
done
checks_failed=0
for check in typecheck lint cycles format docs api apidocs; do
  if ! wait "${check_pids[${check}]}"; then
    cat "${checks_dir}/${check}.log"
    echo "${check}: 0 passed, 1 failed"
    checks_failed=1
  fi
done
[ "${checks_failed}" -eq 0 ] || exit 1
mkdir -p test-output
rm -f test-output/unit-report.json test-output/simulation-report.json test-output/integ-report.json test-output/coverage/coverage-summary.json

coverage=(--coverage)
summary=(--coverage-summary test-output/coverage/coverage-summary.json)
if [ "$#" -gt 0 ]; then
  coverage=()
  summary=()
fi

status=0
# The unit tests use every core: they are CPU-bound and need no server. The coverage floor is
# measured on them alone.
VITEST_JSON_REPORT=test-output/unit-report.json npx vitest run test/ --project zk-plan --maxWorkers=100% "${coverage[@]}" --passWithNoTests "$@" || status=1
# The integration tests (with the example tests of examples/, which start real servers and workers
# too) run one file at a time, since their fault tests time real processes, and
# spend most of that time waiting on servers and workers. The seeded simulations (the project
# `simulations` in vitest.config.ts, and the mutants' self-tests; all on fake time, without
# coverage) use that idle CPU meanwhile, at the lowest priority (nice 19) so that they never delay a
# process an integration test times. Their output follows the integration tests'.
echo "simulations: running beside the integration tests; their output follows"
nice -n 19 env VITEST_JSON_REPORT=test-output/simulation-report.json npx vitest run test/ --project simulations --project 'mutant:*' --maxWorkers=100% --passWithNoTests "$@" >test-output/simulations.log 2>&1 &
simulations_pid=$!
VITEST_JSON_REPORT=test-output/integ-report.json npx vitest run integ/ examples/ --passWithNoTests "$@" || status=1
wait "${simulations_pid}" || status=1
cat test-output/simulations.log
node scripts/print-test-summary.mjs test-output/unit-report.json test-output/simulation-report.json test-output/integ-report.json "${summary[@]}" || status=1
exit "${status}"
