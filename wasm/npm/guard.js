// What the JS halves of the package share: the web build's "used before init" failure told as
// what it is, and the argument checks that name the argument the way the core's do.

/** `call()`, with a TypeError from an uninitialised web build turned into advice. */
export function initialised(call) {
  try {
    return call();
  } catch (e) {
    if (e instanceof TypeError && /undefined/.test(e.message)) {
      throw new Error(
        'agent-chatter-wasm: the WebAssembly module is not initialised: call `await init()` (or `initSync(bytes)`) from the web build before using it',
      );
    }
    throw e;
  }
}

/** What a wrong argument is, in the words the core's own checks use (`number`, `null`, …). */
export function describe(value) {
  return value === null ? 'null' : typeof value;
}

/** Throws unless `value` is a string: `${argument}: expected a string, found number`. */
export function stringArgument(value, argument) {
  if (typeof value !== 'string') throw new Error(`${argument}: expected a string, found ${describe(value)}`);
}
