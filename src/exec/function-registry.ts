import { InvalidArgumentError } from '../errors/usage-errors.js';
import { assertFunctionName } from './function-name.js';
import { SHELL_FUNCTION } from '../shell/shell-params.js';
import { COLLECT_FUNCTION } from '../spawn/collect-function.js';
import { WAIT_FOR_PLAN_FUNCTION } from '../dependent/dependency-target.js';
import { SUB_PLAN_FUNCTION } from '../subplan/sub-plan-target.js';
import { assertFunctionSchemas, type FunctionSchemas } from './standard-schema.js';
import type { TaskContext } from './task-context.js';
import type { JobFunction } from '../jobs/job-context.js';

/**
 * The form the registry stores; callers register functions with narrower types.
 *
 * @category Plans and tasks
 */
export type RegisteredFunction = (ctx: TaskContext<never[]>, ...args: never[]) => unknown;

/**
 * The functions a worker process can run, by name. Register the same names on every worker;
 * a task stores only the name and its params, never code.
 *
 * @category Plans and tasks
 */
export class FunctionRegistry {
  private readonly functions = new Map<string, RegisteredFunction>();
  private readonly schemas = new Map<string, FunctionSchemas>();
  private readonly jobs = new Map<string, JobFunction>();

  /**
   * Registers `fn` under `name`; throws on an invalid or duplicate name. Returns the registry for
   * chaining. With `schemas` (Standard Schemas: zod, valibot, arktype…), a task's params and
   * inputs are checked before the function runs and its result before it is stored; a mismatch
   * fails the task for good (SCHEMA_MISMATCH), and submitPlan checks what it can before writing.
   */
  register<Params extends readonly unknown[], Args extends readonly unknown[]>(
    name: string,
    fn: (ctx: TaskContext<Params>, ...args: Args) => unknown,
    schemas?: FunctionSchemas,
  ): this {
    assertFunctionName(name);
    if (typeof fn !== 'function')
      throw new InvalidArgumentError(
        'fn',
        `function '${name}' must be a function, got ${typeof fn}`,
      );
    if (name === SHELL_FUNCTION) {
      throw new InvalidArgumentError(
        'name',
        `'${SHELL_FUNCTION}' is the built-in shell task function (call('shell', { command, … }), run by workers started with allowShell: true): register yours under another name`,
      );
    }
    if (name === WAIT_FOR_PLAN_FUNCTION) {
      throw new InvalidArgumentError(
        'name',
        `'${WAIT_FOR_PLAN_FUNCTION}' is the built-in function of dependent tasks (waitForPlan): register yours under another name`,
      );
    }
    if (name === SUB_PLAN_FUNCTION) {
      throw new InvalidArgumentError(
        'name',
        `'${SUB_PLAN_FUNCTION}' is the built-in function of sub-plan tasks (subPlan): register yours under another name`,
      );
    }
    if (name === COLLECT_FUNCTION) {
      throw new InvalidArgumentError(
        'name',
        `'${COLLECT_FUNCTION}' is the built-in function a map without reduce hands over to: register yours under another name`,
      );
    }
    if (this.functions.has(name)) {
      throw new InvalidArgumentError(
        'name',
        `function '${name}' is already registered; use another name or a new registry`,
      );
    }
    if (schemas !== undefined) {
      assertFunctionSchemas(name, schemas);
      this.schemas.set(name, schemas);
    }
    this.functions.set(name, fn as unknown as RegisteredFunction);
    return this;
  }

  /**
   * Registers a job function (`jobs(parent).define({ fn: name, … })`): called with a JobContext,
   * its share of the job's work items. Job workers (`startJobWorker`) run only jobs whose function
   * they registered. Job and task functions have separate names.
   */
  registerJob(name: string, fn: JobFunction): this {
    assertFunctionName(name);
    if (typeof fn !== 'function')
      throw new InvalidArgumentError(
        'fn',
        `job function '${name}' must be a function, got ${typeof fn}`,
      );
    if (this.jobs.has(name))
      throw new InvalidArgumentError(
        'name',
        `job function '${name}' is already registered; use another name or a new registry`,
      );
    this.jobs.set(name, fn);
    return this;
  }

  /** The job function registered under `name` (registerJob), if any. */
  jobFunction(name: string): JobFunction | undefined {
    return this.jobs.get(name);
  }

  /** Registered job function names, sorted. */
  jobNames(): string[] {
    return [...this.jobs.keys()].sort();
  }

  /** The schemas `name` was registered with, if any. */
  schemasOf(name: string): FunctionSchemas | undefined {
    return this.schemas.get(name);
  }

  /** The task function registered under `name`, with its schemas, if any. */
  get(name: string): RegisteredFunction | undefined {
    return this.functions.get(name);
  }

  /** Whether a task function is registered under `name`. */
  has(name: string): boolean {
    return this.functions.has(name);
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.functions.keys()].sort();
  }

  /** How many task functions are registered. */
  get size(): number {
    return this.functions.size;
  }
}
