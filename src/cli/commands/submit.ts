import { Option, type Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import { FunctionRegistry } from '../../exec/function-registry.js';
import type { PlanSpec } from '../../spec/plan-spec.js';
import { checkSpecForSubmit } from '../../spec/submit-plan.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { UsageError } from '../exit-codes.js';
import { loadFunctions } from '../load-functions.js';
import {
  addConnectionOptions,
  checkParentPath,
  integer,
  type ConnectionOptions,
} from '../options.js';
import { print, printJson } from '../output.js';
import { parseParams, readDocument } from '../documents.js';

interface SubmitCliOptions extends ConnectionOptions {
  readonly functions?: string;
  readonly parent?: string;
  readonly param: readonly string[];
  readonly allowUnknown: boolean;
  readonly wait: boolean;
  readonly timeoutMs?: number;
}

interface ValidateCliOptions {
  readonly param: readonly string[];
  readonly functions?: string;
  readonly json?: boolean;
}

const collect = (value: string, previous: readonly string[]): string[] => [...previous, value];

/** `zk-plan submit <spec.json>` and `zk-plan validate <spec.json>`: declarative plans (src/spec). */
export function registerSubmit(program: Command): void {
  const submit = program
    .command('submit')
    .description(
      'build and ready a plan from a JSON or YAML spec { tasks: { [key]: { fn, params?, inputs?, options? } }, options? }, checked first',
    )
    .argument('<spec>', 'the spec: a JSON file, or YAML when its name ends in .yaml or .yml')
    .addOption(new Option('--parent <path>', 'parent of the new plan (required)'))
    .addOption(
      new Option(
        '--param <name=value>',
        'a value for { "$param": name } placeholders (repeatable; the value is JSON when it parses, else text)',
      )
        .default([])
        .argParser(collect),
    )
    .addOption(
      new Option(
        '--functions <module>',
        'also check function names and typed edges (schemas) against this module’s registry',
      ),
    )
    .addOption(
      new Option(
        '--allow-unknown',
        'submit even when no live worker of the parent registers the functions and --functions is not given',
      ).default(false),
    )
    .addOption(new Option('--wait', 'wait until the plan ends (exit codes as wait)').default(false))
    .addOption(
      new Option('--timeout-ms <ms>', 'with --wait: give up after this long (exit 3)').argParser(
        integer(1),
      ),
    );
  addConnectionOptions(submit, DEFAULTS.cliConnectTimeoutMs.read);
  submit.addHelpText(
    'after',
    `\nPrints the plan's path (--json: { "plan", "tasks": { key: path } }). A spec problem exits 2 with its code and task key.`,
  );
  withUsageHint(submit);
  setAction(submit, async (file: string, options: SubmitCliOptions) => {
    if (!options.parent) throw new UsageError('--parent is required');
    const parent = checkParentPath(options.parent);
    const spec = await readDocument(file);
    const params = parseParams(options.param);
    const functions =
      options.functions === undefined ? undefined : await loadFunctions(options.functions);
    const submitted = await withZkPlan(
      options,
      async (zkPlan) => {
        const result = await zkPlan.submitPlan(parent, spec as never, {
          params,
          allowUnknownFunctions: options.allowUnknown,
        });
        if (options.wait)
          await zkPlan.waitForCompletion(result.plan, {
            timeoutMs: options.timeoutMs ?? DEFAULTS.waitTimeoutMs,
          });
        return result;
      },
      functions === undefined ? {} : { functions },
    );
    if (options.json) printJson(submitted);
    else print(submitted.plan);
  });

  const validate = program
    .command('validate')
    .description(
      'check a plan spec (JSON or YAML) without connecting: shape, input keys, cycles, params, storable values (and function names with --functions)',
    )
    .argument('<spec>', 'the spec: a JSON file, or YAML when its name ends in .yaml or .yml')
    .addOption(
      new Option('--param <name=value>', 'a value for { "$param": name } placeholders (repeatable)')
        .default([])
        .argParser(collect),
    )
    .addOption(
      new Option(
        '--functions <module>',
        'also check function names and typed edges (schemas) against this module’s registry',
      ),
    )
    .addOption(new Option('--json', 'print { "valid": true, "order": [keys] }'));
  withUsageHint(validate);
  setAction(validate, async (file: string, options: ValidateCliOptions) => {
    const spec = await readDocument(file);
    const functions =
      options.functions === undefined
        ? new FunctionRegistry()
        : await loadFunctions(options.functions);
    // What submit checks, offline: no live workers to ask.
    const checked = await checkSpecForSubmit(spec as PlanSpec, functions, [], {
      params: parseParams(options.param),
      allowUnknownFunctions: true,
    });
    if (options.json) printJson({ valid: true, order: checked.order });
    else print(`valid: ${checked.order.length} task(s), in order ${checked.order.join(', ')}`);
  });
}
