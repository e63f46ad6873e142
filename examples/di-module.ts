/**
 * zk-plan as a tsyringe DI module, as in the Clojure original: register the module in a child
 * container with its configuration, `startup` connects and spawns the workers, `shutdown` stops
 * them and closes the session. Task functions resolve services from the same container.
 *
 *   npx tsx examples/di-module.ts
 */
import 'reflect-metadata'; // before tsyringe: it checks for the Reflect polyfill when it loads
import { container as rootContainer, type InjectionToken } from 'tsyringe';
import {
  FunctionRegistry,
  WORKER_POOL,
  ZK_PLAN,
  call,
  shutdown,
  startup,
  zkPlanModule,
  type TaskContext,
} from '../src/index.js';
import { runMain, withZooKeeper } from './local-zookeeper.js';

/** An application service the tasks use, registered in the same container as the module. */
interface Greeter {
  greet(name: string): string;
}
const GREETER: InjectionToken<Greeter> = Symbol('examples.greeter');

const functions = new FunctionRegistry()
  .register('di.name', (ctx: TaskContext<[string]>) => ctx.params[0])
  .register('di.greet', (ctx: TaskContext<[]>, ...names: string[]) =>
    names.map((name) => ctx.container.resolve<Greeter>(GREETER).greet(name)),
  )
  .register('di.join', (ctx: TaskContext<[string]>, greetings: string[]) =>
    greetings.join(ctx.params[0]),
  );

await runMain('di-module', () =>
  withZooKeeper(async (connect) => {
    const container = rootContainer.createChildContainer();
    container.register(GREETER, { useValue: { greet: (name: string) => `Hello, ${name}!` } });
    zkPlanModule(container, {
      zookeeper: { connect },
      zkPlan: { workers: 3, parent: '/di-example' },
      functions,
    });

    const zkPlan = await startup(container);
    let plan: string | undefined;
    try {
      console.log(
        `module started: ZK_PLAN resolves to the started ZkPlan: ${container.resolve(ZK_PLAN) === zkPlan}, ` +
          `${container.resolve(WORKER_POOL).size} workers on /di-example`,
      );
      plan = await zkPlan.createPlan('/di-example');
      const names = await Promise.all(
        ['Ada', 'Grace', 'Edsger'].map((name) =>
          zkPlan.addTask(plan as string, call('di.name', name)),
        ),
      );
      const greetings = await zkPlan.addTask(plan, call('di.greet'), names);
      const joined = await zkPlan.addTask(plan, call('di.join', ' '), [greetings], {
        keepResult: true,
      });
      await zkPlan.markAsReady(plan);
      await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });

      const result = await zkPlan.getResult(joined);
      console.log(`plan ${plan}: ${String(result)}`);
      const expected = 'Hello, Ada! Hello, Grace! Hello, Edsger!';
      if (result !== expected)
        throw new Error(`expected ${JSON.stringify(expected)}, got ${JSON.stringify(result)}`);
    } finally {
      if (plan !== undefined) await zkPlan.zk.deleteRecursive(plan).catch(() => undefined);
      await shutdown(container);
      console.log(
        `module shut down: ZkPlan ${zkPlan.state}, pool ${container.resolve(WORKER_POOL).state}`,
      );
    }
  }),
);
