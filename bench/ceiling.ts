/** The ZooKeeper ceiling the bench measures first: serial create latency and pipelined creates/s. */
import { ZkClient } from '../src/testing/index.js';
import { quantile } from './stats.js';

export interface Ceiling {
  readonly serialP50: number;
  readonly serialP99: number;
  readonly pipelinedPerSecond: number;
}

export async function measureCeiling(connect: string): Promise<Ceiling> {
  const zk = await ZkClient.connect({
    connect,
    sessionTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
  });
  try {
    await zk.ensurePath('/ceiling');
    const latencies: number[] = [];
    for (let i = 0; i < 500; i++) {
      const started = performance.now();
      await zk.create(`/ceiling/serial-${i}`);
      latencies.push(performance.now() - started);
    }
    const count = 5_000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: count }, (_, i) => zk.create(`/ceiling/pipelined-${i}`)),
    );
    const pipelinedPerSecond = count / ((performance.now() - started) / 1000);
    await zk.deleteRecursive('/ceiling');
    return {
      serialP50: quantile(latencies, 0.5),
      serialP99: quantile(latencies, 0.99),
      pipelinedPerSecond,
    };
  } finally {
    zk.close();
  }
}
