// A Map bounded to `capacity` entries that forgets the least recently used one first (a Map keeps
// insertion order, so re-inserting on every hit keeps the oldest entry first).
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();
  constructor(private readonly capacity: number) {}

  get size() {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V) {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as K);
  }
}
