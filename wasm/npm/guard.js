// The web build's "used before init" failure (a TypeError on the missing wasm exports), told
// as what it is. Shared by the JS halves of the package.

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
