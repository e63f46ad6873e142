import { describe, expect, it } from 'vitest';
import { NATIVE } from '../../src/zk/native-client.js';
import { WatchRegistry } from '../../src/zk/watch-registry.js';
import type { WatchEvent } from '../../src/zk/zk-client-types.js';

describe('WatchRegistry (watchers kept out of the native client, which never frees them)', () => {
  it('delivers each event to the kinds of watch ZooKeeper delivers it to, once', () => {
    const registry = new WatchRegistry();
    const seen: string[] = [];
    const record = (name: string) => (event: WatchEvent) => seen.push(`${name}:${event.type}`);
    registry.add('/a', 'exists', record('exists'));
    registry.add('/a', 'data', record('data'));
    registry.add('/a', 'child', record('child'));
    registry.nativeCallback(NATIVE.CHILD_EVENT, 3, '/a');
    expect(seen).toEqual(['child:child']);
    registry.nativeCallback(NATIVE.CHANGED_EVENT, 3, '/a');
    expect(seen).toEqual(['child:child', 'exists:changed', 'data:changed']);
    registry.nativeCallback(NATIVE.DELETED_EVENT, 3, '/a');
    expect(seen).toHaveLength(3); // all fired already: one-shot
    expect(registry.size).toBe(0);
  });

  it('tells every watcher of a session event, once, and holds none afterwards', () => {
    const registry = new WatchRegistry();
    const seen: WatchEvent[] = [];
    registry.add('/a', 'data', (event) => seen.push(event));
    registry.add('/b', 'child', (event) => seen.push(event));
    registry.nativeCallback(NATIVE.SESSION_EVENT, 1, '');
    registry.nativeCallback(NATIVE.SESSION_EVENT, 3, '');
    expect(seen.map((event) => event.type)).toEqual(['session-lost', 'session-lost']);
    expect(registry.size).toBe(0);
  });

  it('drops a registration whose call set no watch, and survives a watcher that throws', () => {
    const registry = new WatchRegistry();
    const kept = registry.add('/a', 'data', () => {
      throw new Error('bug');
    });
    let heard = false;
    registry.add('/a', 'exists', () => (heard = true));
    const dropped = registry.add('/b', 'data', () => undefined);
    registry.remove('/b', dropped);
    expect(registry.size).toBe(2);
    registry.nativeCallback(NATIVE.DELETED_EVENT, 3, '/a');
    expect(heard).toBe(true);
    expect(registry.size).toBe(0);
    registry.remove('/a', kept); // already gone: no-op
  });
});
