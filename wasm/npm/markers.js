// parseMessage, stripAll, stripRouting: the JS half. The core (wasm) reads the markers and
// strips; a stripped text that is a piece of the input comes back as its position, and is
// sliced here from the string the caller passed (no long text decoded twice). Lone surrogates
// in a slice read as U+FFFD, as the core reads them on every other path.

import { initialised, stringArgument } from './guard.js';

/**
 * The marker functions over a build's wasm exports (node or web).
 * @param {typeof import('./node/agent_chatter_wasm.js')} wasm
 */
export function defineMarkers(wasm) {
  const encoder = new TextEncoder();
  /** The text as UTF-8 for the core: the host's native encoder, one copy into wasm. */
  const utf8 = (text, argument) => {
    stringArgument(text, argument);
    return encoder.encode(text);
  };

  /** Parses every marker of `text`: the peer's `MessageRouter.parseMessage` result plus `isDone`. */
  function parseMessage(text) {
    const [clean, addressees, intents, fromMember, teamTask, dropTargets, isDone] = initialised(() => wasm.parseMessageParts(utf8(text, 'parseMessage(text)')));
    const parsedAddressees = addressees.map((name, i) => ({ name, intent: intents[i] }));
    return { addressees, parsedAddressees, cleanContent: view(text, clean), fromMember, teamTask, dropTargets, isDone };
  }

  /** The agent view of a message: removes FROM, TEAM_TASK, NEXT, DONE and DROP markers. */
  function stripAll(text) {
    return view(text, initialised(() => wasm.stripAllView(utf8(text, 'stripAll(text)'))));
  }

  /** The stored-content view: removes NEXT, DONE and DROP; keeps FROM and TEAM_TASK. */
  function stripRouting(text) {
    return view(text, initialised(() => wasm.stripRoutingView(utf8(text, 'stripRouting(text)'))));
  }

  return { parseMessage, stripAll, stripRouting };
}

/** The stripped text: given, or the slice `[start, end]` of the input. */
function view(text, out) {
  if (typeof out === 'string') return out;
  const slice = text.slice(out[0], out[1]);
  return slice.isWellFormed() ? slice : slice.toWellFormed();
}
