/**
 * Puts `String.prototype`'s properties back in V8's fast mode. ioredis 6 defines
 * `class VerbatimString extends String`, loaded with its client (a BullMQ `Queue` made, or ioredis
 * required), and V8 turns `String.prototype` into a dictionary when it becomes that class's prototype's
 * prototype. V8 makes a prototype fast again only when a property load with feedback goes through it
 * from an object, never from a string primitive: until then, every `charCodeAt`, `slice` or
 * `startsWith` in optimized code, ours and every library's, is a generic IC lookup (a 40-character
 * scan with `charCodeAt` four to five times slower) for the life of the process. A few loads through a
 * String object, after the client is made, undo it; harmless when the prototype is already fast.
 */
export function fastStringPrototype(): void {
  const wrapper: unknown = Object('');
  // The first calls of a function run without feedback (V8 allocates it after a few): 16 is past that.
  for (let i = 0; i < 16; i++) methodOf(wrapper);
}

function methodOf(value: unknown): unknown {
  return (value as { charCodeAt?: unknown }).charCodeAt;
}
