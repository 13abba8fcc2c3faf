// parseMessage, stripAll, stripRouting: the JS half. The text is encoded straight into wasm
// memory (TextEncoder.encodeInto into the core's inbox); the core reads the markers and strips.
// A stripped text that is a piece of the input comes back as its position and is sliced here
// from the string the caller passed (no long text decoded twice); any other text comes back as
// a string when ASCII, else as UTF-16 in the core's outbox. Lone surrogates in a slice read as
// U+FFFD, as the core reads them on every other path.

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
   * Encodes `text` into the core's inbox in one pass; returns how many bytes it takes. The
   * room is three bytes per UTF-16 unit (the most UTF-8 takes for one), so nothing is left
   * over to encode again: the inbox grows once to the longest text and is reused.
   */
  const handIn = (text, argument) => {
    stringArgument(text, argument);
    const room = text.length * 3;
    return encoder.encodeInto(text, bytesAt(wasm.textInbox(room), room)).written;
  };

  let utf16;
  /**
   * The text the core handed back as UTF-16 in its outbox (it does for non-ASCII text: Node
   * decodes UTF-16 several times faster than non-ASCII UTF-8), or `undefined`. The decoder
   * keeps a leading U+FEFF (`ignoreBOM`), as a string crossing does.
   */
  const handedBack = () => {
    const units = wasm.outboxUnits();
    if (units === 0) return undefined;
    utf16 ??= new TextDecoder('utf-16le', { ignoreBOM: true });
    return utf16.decode(new Uint16Array((memory ??= wasm.wasmMemory()).buffer, wasm.outbox(), units));
  };

  /** The stripped text: given, handed back in the outbox, or the piece of the input whose position the core holds. */
  const view = (text, out) => {
    if (out !== undefined) return out;
    const back = handedBack();
    if (back !== undefined) return back;
    return slice(text);
  };

  /** The piece of `text` whose position the core holds (the last view). */
  const slice = (text) => {
    const piece = text.slice(wasm.viewStart(), text.length - wasm.viewTail());
    // Only a text whose UTF-8 holds U+FFFD can have had a lone surrogate (encodeInto writes
    // one as U+FFFD): the core says so, sparing a pass over every other slice.
    return wasm.viewMayHoldLoneSurrogates() && !piece.isWellFormed() ? piece.toWellFormed() : piece;
  };

  /** Parses every marker of `text`: the peer's `MessageRouter.parseMessage` result plus `isDone`. */
  function parseMessage(text) {
    return initialised(() => {
      // One string from the core, in lines: flags, names, intents, from, task, drops, clean.
      const packed = wasm.parseMessagePacked(handIn(text, 'parseMessage(text)')) ?? handedBack();
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
        cleanContent: flags.includes('v') ? slice(text) : packed.slice(at),
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
