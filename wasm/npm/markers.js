// parseMessage, stripAll, stripRouting: the JS half. The text is encoded straight into wasm
// memory (TextEncoder.encodeInto into the core's inbox); the core reads the markers and strips.
// A stripped text that is a piece of the input comes back as its position and is sliced here
// from the string the caller passed (no long text decoded twice). Lone surrogates in a slice
// read as U+FFFD, as the core reads them on every other path.

import { initialised, stringArgument } from './guard.js';

/**
 * The marker functions over a build's wasm exports (node or web).
 * @param {typeof import('./node/agent_chatter_wasm.js')} wasm
 */
export function defineMarkers(wasm) {
  const encoder = new TextEncoder();
  let memory;
  /** `length` bytes of wasm memory at `pointer` (made after any call that may grow memory). */
  const bytesAt = (pointer, length) => new Uint8Array((memory ??= wasm.wasmMemory()).buffer, pointer, length);

  /**
   * Encodes `text` into the core's inbox; returns how many bytes it takes. Room for one byte
   * per unit first (all of an ASCII text); what did not fit is encoded after it, with room for
   * three bytes per unit (the most UTF-8 takes for one UTF-16 unit).
   */
  const handIn = (text, argument) => {
    stringArgument(text, argument);
    const units = text.length;
    let { read, written } = encoder.encodeInto(text, bytesAt(wasm.textInbox(units), units));
    if (read < units) {
      const room = (units - read) * 3;
      const more = encoder.encodeInto(text.substring(read), bytesAt(wasm.textInbox(written + room) + written, room));
      written += more.written;
    }
    return written;
  };

  /** The stripped text: given, or the piece of the input whose position the core holds. */
  const view = (text, out) => {
    if (out !== undefined) return out;
    const slice = text.slice(wasm.viewStart(), text.length - wasm.viewTail());
    return slice.isWellFormed() ? slice : slice.toWellFormed();
  };

  /** Parses every marker of `text`: the peer's `MessageRouter.parseMessage` result plus `isDone`. */
  function parseMessage(text) {
    return initialised(() => {
      // One string from the core, in lines: flags, names, intents, from, task, drops, clean.
      const packed = wasm.parseMessagePacked(handIn(text, 'parseMessage(text)'));
      let at = 0;
      const line = () => {
        const end = packed.indexOf('\n', at);
        const value = packed.slice(at, end);
        at = end + 1;
        return value;
      };
      const flags = line();
      const names = line();
      const intents = line();
      const from = line();
      const task = line();
      const drops = line();
      const addressees = names === '' ? [] : names.split(',');
      const parsedAddressees = addressees.map((name, i) => ({ name, intent: `P${intents[i]}` }));
      return {
        addressees,
        parsedAddressees,
        cleanContent: flags.includes('v') ? view(text, undefined) : packed.slice(at),
        fromMember: flags.includes('f') ? from : null,
        teamTask: flags.includes('t') ? task : null,
        dropTargets: drops === '' ? [] : drops.split(','),
        isDone: flags.includes('d'),
      };
    });
  }

  /** The agent view of a message: removes FROM, TEAM_TASK, NEXT, DONE and DROP markers. */
  function stripAll(text) {
    return initialised(() => view(text, wasm.stripAllView(handIn(text, 'stripAll(text)'))));
  }

  /** The stored-content view: removes NEXT, DONE and DROP; keeps FROM and TEAM_TASK. */
  function stripRouting(text) {
    return initialised(() => view(text, wasm.stripRoutingView(handIn(text, 'stripRouting(text)'))));
  }

  return { parseMessage, stripAll, stripRouting };
}
