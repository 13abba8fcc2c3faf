// What the JS halves of the package share: the web build's "used before init" failure told as
// what it is, and the argument checks that name the argument the way the core's do.

/**
 * Whether `message` is one of the package's own refusals of an input: it starts by naming the
 * call (`addMessage(message): …`, `Scenario.preview(memberId): …`).
 */
export function namesTheCall(message) {
  return /^(new )?[\w.]+(\([\w, ]*\))?: /.test(message);
}

/** `call()`, with a TypeError from an uninitialised web build turned into advice. */
export function initialised(call) {
  try {
    return call();
  } catch (e) {
    if (e instanceof TypeError && /undefined/.test(e.message) && !namesTheCall(e.message)) {
      throw new Error(
        'agent-chatter-wasm: the WebAssembly module is not initialised: call `await init()` (or `initSync({ module: bytes })`) from the web build before using it',
      );
    }
    throw e;
  }
}

/**
 * What a wrong argument is, in the words every "found …" of the package uses (the core's
 * readers' and `kind_of` in wasm/src/js.rs): the value itself when short (`5`, `NaN`, `true`,
 * `null`, `undefined`, `the string "x"`), else its kind (`a string`, `an array`, `an object`,
 * `a function`).
 */
export function describe(value) {
  const type = typeof value;
  if (value === null || type === 'undefined' || type === 'number' || type === 'boolean') return String(value);
  if (type === 'string') return [...value].length <= 40 ? `the string ${JSON.stringify(value)}` : 'a string';
  if (Array.isArray(value)) return 'an array';
  if (type === 'function') return 'a function';
  if (type === 'object') return 'an object';
  return `a ${type}`;
}

/**
 * Makes `cls` (a wasm-bindgen class) say what went wrong in the user's words: a method or
 * getter called after `free()` (wasm-bindgen says "null pointer passed to rust") or re-entered
 * from one of its arguments ("recursive use of an object detected…"), and, when
 * `checkInit`, a constructor or static method used before the web build's `init()`. The class
 * is patched in place, so instances made by its static methods behave the same.
 */
export function guardClass(cls, name) {
  const freed = (member) => (e) => {
    if (e instanceof Error && e.message === 'null pointer passed to rust') {
      throw new Error(`${name}.${member}: this ${name} was freed (free() was called); make a new one`);
    }
    // wasm-bindgen's words when the object is borrowed by a call still running: the classes
    // read their arguments before borrowing their state, so this is a bug, not the caller's.
    if (e instanceof Error && e.message.includes('recursive use of an object detected')) {
      throw new Error(`${name}.${member}: this ${name} is busy with another call; nothing changed`);
    }
    throw e;
  };
  const proto = cls.prototype;
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (key === 'constructor' || key === 'free' || key === '__destroy_into_raw') continue;
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (typeof d.value === 'function') {
      const method = d.value;
      d.value = function (...args) {
        try {
          return method.apply(this, args);
        } catch (e) {
          freed(key)(e);
        }
      };
    }
    if (typeof d.get === 'function') {
      const get = d.get;
      d.get = function () {
        try {
          return get.call(this);
        } catch (e) {
          freed(key)(e);
        }
      };
    }
    Object.defineProperty(proto, key, d);
  }
  // A second free() is harmless, as on any disposable.
  const free = proto.free;
  if (typeof free === 'function') {
    proto.free = function () {
      try {
        free.call(this);
      } catch (e) {
        // Already freed; or still marked in use by a call a caller's exception cut short
        // (its memory then stays: freeing it under that mark is not possible).
        if (!(e instanceof Error && (e.message === 'null pointer passed to rust' || e.message.includes('recursive use of an object detected')))) throw e;
      }
    };
  }
  return cls;
}

/**
 * `cls` behind a check that the web build was initialised: `new cls(…)` and its static methods
 * say "call `await init()`" instead of a TypeError from inside the glue.
 */
export function requireInit(cls) {
  return new Proxy(cls, {
    construct(target, args, newTarget) {
      return initialised(() => Reflect.construct(target, args, newTarget));
    },
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'prototype') return value;
      return (...args) => initialised(() => value.apply(target, args));
    },
  });
}

/** Throws unless `value` is a string: `${argument}: expected a string, found number`. */
export function stringArgument(value, argument) {
  if (typeof value !== 'string') throw new TypeError(`${argument}: expected a string, found ${describe(value)}`);
}
