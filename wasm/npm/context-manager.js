// ContextManager: a drop-in for @testany/agent-chatter-core's class (docs/architecture.md §12,
// §19 (seed 001)).
//
// The messages live here, in JS, in the peer's shapes, as the peer keeps them: addMessage,
// getMessages, getLatestMessage and snapshots cost what the peer's do, and the objects a caller
// gets back are the ones it stored. Prompts are built by the core in wasm (PromptEngine), which
// is handed only the messages a prompt reads, once each (it keeps their stripped text). No
// prompt rule is written here: this file stores, checks shapes, and calls.
//
// Shape checks: a clean input is accepted here; anything else is asked of the core's reader,
// which accepts it or names the field that is wrong, so every error comes from one reader
// (wasm/js/shapes.test.mjs holds the two together over one corpus of bad inputs).
//
// Messages are read by the engine when a prompt first needs them; a message object changed
// after that keeps its first reading (the peer would read it again).

import { describe, initialised, namesTheCall, stringArgument } from './guard.js';

/** The wasm-side context of a `getContextForAgent` result (symbol-keyed: not in its keys or JSON). */
const HELD = Symbol('agent-chatter.held');
/** Node's `util.inspect` (and so `console.log`) shows what this method returns. */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** `console.log` of a `getContextForAgent` result: its values, not `[Getter/Setter]`s. */
function inspectInput() {
  const { contextMessages, currentMessage, teamTask, systemInstruction, instructionFileText, maxBytes } = this;
  return { contextMessages, currentMessage, teamTask, systemInstruction, instructionFileText, maxBytes };
}

/** `console.log` of an `assemblePrompt` result: the explain shown, not a `[Getter/Setter]`. */
function inspectAssembled() {
  const { prompt, systemFlag, explain } = this;
  return { prompt, systemFlag, explain };
}

/**
 * The `ContextManager` class over a build's `PromptEngine` (node or web).
 * @param {typeof import('./node/agent_chatter_wasm.js').PromptEngine} PromptEngine
 */
export function defineContextManager(PromptEngine) {
  let cachedLimit;
  const limit = () => (cachedLimit ??= initialised(() => PromptEngine.messageLimit()));

  return class ContextManager {
    #messages = [];
    /** The newest stored message, kept beside the array so `getLatestMessage` is one read. */
    #latest = null;
    #nextSeq = 1;
    #teamTask = null;
    #engine;
    #window;
    #maxBytes;
    #onMessageAdded;
    #onTeamTaskChanged;
    #logger;
    /** The logger when it has a `debug` method (the peer's debug lines go there), else unset. */
    #debug;
    /** agentType → its normalised name when unknown, `null` when known (asked once each). */
    #unknownTypes = new Map();

    /**
     * `new ContextManager({contextWindowSize?, maxBytes?, onMessageAdded?, onTeamTaskChanged?,
     * logger?})`. Defaults, the peer's: window 10 (0 gives no history), budget 768 KiB. A `logger` (the
     * peer's `ILogger`) gets the peer's warnings, in its words: a team task cut at 5 KiB, an
     * unknown agent type assembled as plain text; and, when it has a `debug` method, the debug
     * lines of the peer's design (docs/architecture.md §19 (seed 001 §7)): each message added, and each
     * context that dropped an AI→AI duplicate.
     */
    constructor(options) {
      const argument = 'new ContextManager(options)';
      if (options !== undefined && options !== null && typeof options !== 'object') {
        throw new TypeError(`${argument}: expected an object, found ${describe(options)}`);
      }
      const o = options ?? {};
      this.#window = wholeNumber(o.contextWindowSize, `${argument}: contextWindowSize`) ?? 10;
      this.#maxBytes = budget(o.maxBytes, `${argument}: maxBytes`) ?? 786432;
      this.#onMessageAdded = hook(o.onMessageAdded, 'onMessageAdded');
      this.#onTeamTaskChanged = hook(o.onTeamTaskChanged, 'onTeamTaskChanged');
      this.#logger = logger(o.logger);
      if (typeof this.#logger?.debug === 'function') this.#debug = this.#logger;
    }

    /** The engine, made when first needed (a manager that only stores costs no wasm). */
    #wasm() {
      return (this.#engine ??= newEngine(PromptEngine, this.#window, this.#maxBytes));
    }

    /**
     * Stores a message under the next `msg-N` id and returns it (then calls `onMessageAdded`).
     * `timestamp` may be a `Date`, milliseconds or a date string (stored as a `Date`); absent,
     * the stored message has none, as in the peer.
     */
    addMessage(message) {
      const argument = 'addMessage(message)';
      if (message === null || typeof message !== 'object' || Array.isArray(message)) {
        throw new TypeError(`${argument}: expected a message object, found ${describe(message)}`);
      }
      const given = message.timestamp;
      // The common case inline: a valid `Date`, stored as given; none given, none stored (as
      // the peer stores it).
      const timestamp =
        given === undefined || given === null ? undefined : given instanceof Date && given.getTime() >= 0 ? given : toDate(given, argument);
      if (!isCleanAddition(message, limit())) refused(() => PromptEngine.checkMessage(message));
      const stored = storedMessage(`msg-${this.#nextSeq}`, message, timestamp);
      this.#nextSeq += 1;
      this.#messages.push(stored);
      this.#latest = stored;
      this.#debug?.debug(`[ContextManager] Message added: ${stored.id}`);
      this.#onMessageAdded?.(stored);
      return stored;
    }

    /** Every stored message, oldest first (a new array each call; the same objects). */
    getMessages() {
      return this.#messages.slice();
    }

    /** The newest message, or `null`. */
    getLatestMessage() {
      return this.#latest;
    }

    /**
     * Sets the team task, cut at 5 KiB on a character boundary (`""` leaves none and reads back as `""`, as in the peer), then calls
     * `onTeamTaskChanged` with the stored value.
     */
    setTeamTask(task) {
      // `""` is stored as `""`, as the peer stores it (no section in a prompt either way).
      this.#teamTask = refused(() => this.#wasm().setTeamTask(task)) ?? (task === '' ? '' : null);
      // Warned, as the peer warns, only for a cut: a lone surrogate also changes the text
      // (it becomes U+FFFD in UTF-8) without any cut.
      if (this.#logger && this.#teamTask !== null && utf8Length(task) > 5120) {
        this.#logger.warn(
          `[ContextManager] TeamTask exceeded 5KB limit (${utf8Length(task)} bytes), truncated to ${utf8Length(this.#teamTask)} bytes`,
        );
      }
      this.#onTeamTaskChanged?.(this.#teamTask);
    }

    /** The team task, or `null`. */
    getTeamTask() {
      return this.#teamTask;
    }

    /**
     * The assembler input for `agentId`: the latest message as current, the window before it
     * (markers stripped, AI→AI deduplicated), the team task, the agent's instructions and the
     * budget. Its fields are read from wasm when first read; `assemblePrompt` builds from the
     * held messages directly unless the object was changed.
     */
    getContextForAgent(agentId, agentType, options) {
      const argument = 'getContextForAgent(agentId, agentType, options)';
      stringArgument(agentId, 'getContextForAgent(agentId)');
      // `agentType` is not read, as in the peer (the format is chosen by `assemblePrompt`): it
      // may be left out, but a value that is not a string is a mistake worth naming.
      if (agentType !== undefined && agentType !== null) stringArgument(agentType, 'getContextForAgent(agentId, agentType)');
      if (options !== undefined && options !== null && typeof options !== 'object') {
        throw new TypeError(`${argument}: expected an object, found ${describe(options)}`);
      }
      const o = options ?? {};
      const windowOverride = wholeNumber(o.windowSizeOverride, `${argument}: windowSizeOverride`);
      const end = this.#messages.length;
      this.#mirror(end, windowOverride);
      const engine = this.#wasm();
      const held = refused(() => engine.context(end, agentId, windowOverride, o.systemInstruction, o.instructionFileText));
      if (this.#debug && held.deduplicated()) this.#debug.debug('[ContextManager] Deduplicated context for AI→AI');
      return heldInput(held, o.systemInstruction, this.#teamTask);
    }

    /**
     * Assembles `input` in `agentType`'s format within `input.maxBytes`: `{prompt, systemFlag?,
     * explain}`. Claude's system part is in `systemFlag` only (docs/architecture.md §8).
     */
    assemblePrompt(agentType, input) {
      stringArgument(agentType, 'assemblePrompt(agentType)');
      if (this.#logger) this.#warnIfUnknown(agentType);
      const held = unchangedHeld(input);
      if (held) {
        const [prompt, systemFlag] = held.assemble(agentType);
        return assembled(prompt, systemFlag, () => held.explain(agentType));
      }
      // Checked here, before JSON would turn NaN into null ("absent"): the same words as the
      // constructor's, and 0 refused as there rather than taken as the manager's budget.
      if (input !== null && typeof input === 'object') budget(input.maxBytes, 'assemblePrompt(agentType, input): maxBytes');
      const engine = this.#wasm();
      const [prompt, systemFlag, explain] = refused(() => engine.assembleInput(agentType, input));
      return assembled(prompt, systemFlag, () => explain);
    }

    /** Empties the store and the team task, restarts ids at `msg-1`, and calls `onTeamTaskChanged(null)`. */
    clear() {
      this.#messages = [];
      this.#latest = null;
      this.#nextSeq = 1;
      this.#teamTask = null;
      this.#engine = undefined;
      this.#onTeamTaskChanged?.(null);
    }

    /**
     * Not offered: throws, naming what to use instead, rather than a bare "is not a function"
     * for code moved over from the peer.
     */
    getContextForRoute() {
      throw new Error(
        "getContextForRoute (the peer's routing v3) is not offered by this package: Conversation " +
          "builds routed deliveries (each agent gets the message that addressed it, with the " +
          "other answers to it as related context: delivery policy 'parent'); getContextForAgent " +
          'gives the context of the latest message',
      );
    }

    /** `{messages, teamTask, timestamp, version: 1}` in the peer's shapes, taken now. */
    exportSnapshot() {
      return { messages: this.#messages.slice(), teamTask: this.#teamTask, timestamp: Date.now(), version: 1 };
    }

    /**
     * Replaces the state with a snapshot (the peer's or ours, as an object or JSON text), after
     * checking all of it: on error nothing changes and the message names the field
     * (`messages[3].speaker.id: missing`). Then calls `onTeamTaskChanged`.
     *
     * A snapshot object in the peer's shapes is stored as the peer stores it (its message
     * objects, with every field and timestamp as given), however unusual; from JSON text,
     * timestamps become `Date`s. A snapshot in our format is read by the core's reader, which
     * gives the peer's shapes with `Date`s. A team task over 5 KiB is cut, and warned about,
     * as `setTeamTask` does.
     */
    importSnapshot(snapshot) {
      let messages;
      let teamTask;
      const text = typeof snapshot === 'string';
      const value = text ? parsedOrUndefined(snapshot) : snapshot;
      const clean = typeof value === 'object' && value !== null ? cleanSnapshotIds(value, limit()) : 0;
      if (clean > 0) {
        messages = value.messages.slice();
        teamTask = value.teamTask ?? null;
        // Objects parsed here are ours to finish: their timestamps become `Date`s.
        if (text) for (const m of messages) if (m.timestamp !== undefined) m.timestamp = new Date(m.timestamp);
      } else {
        const read = refused(() => PromptEngine.readSnapshot(snapshot));
        // Checked by the core's reader; kept as given when they are the peer's shapes.
        messages = !text && peerShaped(value.messages) ? value.messages.slice() : read.messages;
        teamTask = !text && typeof value.teamTask === 'string' ? value.teamTask : read.teamTask;
      }
      const engine = teamTask === null ? undefined : newEngine(PromptEngine, this.#window, this.#maxBytes);
      const stored = teamTask === null ? null : engine.setTeamTask(teamTask) ?? (teamTask === '' ? '' : null);
      if (this.#logger && stored !== null && utf8Length(teamTask) > 5120) {
        this.#logger.warn(
          `[ContextManager] TeamTask exceeded 5KB limit (${utf8Length(teamTask)} bytes), truncated to ${utf8Length(stored)} bytes`,
        );
      }
      this.#messages = messages;
      this.#latest = messages.length === 0 ? null : messages[messages.length - 1];
      this.#nextSeq = clean > 0 ? clean : nextSeq(messages);
      this.#engine = engine;
      this.#teamTask = stored;
      this.#onTeamTaskChanged?.(stored);
    }

    /** The peer's warning for an agent type with no format of its own (plain text is used). */
    #warnIfUnknown(agentType) {
      let normalised = this.#unknownTypes.get(agentType);
      if (normalised === undefined) {
        normalised = PromptEngine.unknownAgentType(agentType) ?? null;
        this.#unknownTypes.set(agentType, normalised);
      }
      if (normalised !== null) {
        this.#logger.warn(`[ContextManager] Unknown agentType "${agentType}" (normalized: "${normalised}"), using PlainTextAssembler`);
      }
    }

    /** Hands the engine the messages a prompt for the first `end` messages reads. */
    #mirror(end, windowOverride) {
      const engine = this.#wasm();
      const from = engine.neededFrom(end, windowOverride);
      let have = engine.end();
      if (from < engine.first() || from > have) {
        engine.restartAt(from);
        have = from;
      }
      for (let i = have; i < end; i++) {
        try {
          engine.push(this.#messages[i]);
        } catch (e) {
          throw new TypeError(`getContextForAgent: stored message ${i} (${this.#messages[i]?.id}): ${e.message}`);
        }
      }
    }
  };
}

function newEngine(PromptEngine, window, maxBytes) {
  return initialised(() => new PromptEngine(window, maxBytes));
}

// ---------------------------------------------------------------------------------------------
// The lazy input and output objects

/**
 * The input object of `getContextForAgent`: fields read from wasm on first access. Written as
 * one object literal, not a loop of `defineProperty`: the fields stay own, enumerable
 * properties (spreads, `JSON.stringify` and deep-equal see them), and a literal is cheaper to
 * make on every `getContextForAgent` call.
 */
function heldInput(held, systemInstruction, teamTask) {
  const state = new HeldState(held, systemInstruction, teamTask === '');
  const input = {
    get contextMessages() { return state.read().contextMessages; },
    set contextMessages(v) { state.write('contextMessages', v); },
    get currentMessage() { return state.read().currentMessage; },
    set currentMessage(v) { state.write('currentMessage', v); },
    get teamTask() { return state.read().teamTask; },
    set teamTask(v) { state.write('teamTask', v); },
    get systemInstruction() { return state.read().systemInstruction; },
    set systemInstruction(v) { state.write('systemInstruction', v); },
    get instructionFileText() { return state.read().instructionFileText; },
    set instructionFileText(v) { state.write('instructionFileText', v); },
    get maxBytes() { return state.read().maxBytes; },
    set maxBytes(v) { state.write('maxBytes', v); },
    [HELD]: state,
    [INSPECT]: inspectInput,
  };
  state.owner = input;
  return input;
}

const INPUT_KEYS = 6;

/** What `assemblePrompt` needs to know of one input object. */
class HeldState {
  constructor(held, systemInstruction, emptyTeamTask) {
    this.held = held;
    /** The team task was set to `""`: shown as `""`, as the peer shows it (no section either way). */
    this.emptyTeamTask = emptyTeamTask;
    /** The lines given, shown as given (as the peer does); the engine holds them joined. */
    this.givenLines = Array.isArray(systemInstruction) ? systemInstruction : undefined;
    this.owner = null;
    this.changed = false;
    this.full = undefined;
    this.lines = undefined;
  }

  read() {
    if (this.full === undefined) {
      this.full = this.held.input();
      if (this.givenLines !== undefined) this.full.systemInstruction = this.givenLines;
      if (this.emptyTeamTask && this.full.teamTask === null) this.full.teamTask = '';
      this.lines = this.full.contextMessages.map((l) => [l, l.from, l.to, l.content]);
    }
    return this.full;
  }

  write(key, value) {
    this.read()[key] = value;
    this.changed = true;
  }

  /** True when the lines a caller may have read are still the ones the engine gave. */
  linesIntact() {
    if (this.full === undefined) return true;
    const now = this.full.contextMessages;
    const lines = this.lines;
    if (!Array.isArray(now) || now.length !== lines.length) return false;
    for (let i = 0; i < lines.length; i++) {
      const [line, from, to, content] = lines[i];
      if (now[i] !== line || line.from !== from || line.to !== to || line.content !== content) return false;
    }
    return true;
  }
}

/**
 * The held context of `input` when it is the very object `getContextForAgent` returned and
 * is unchanged (a copy, even a spread one, is assembled from what it holds).
 */
function unchangedHeld(input) {
  const state = input !== null && typeof input === 'object' ? input[HELD] : undefined;
  if (state === undefined || state.owner !== input || state.changed) return undefined;
  if (Object.keys(input).length !== INPUT_KEYS || !state.linesIntact()) return undefined;
  return state.held;
}

/**
 * `{prompt, systemFlag, explain}`, with `systemFlag` `undefined` when there is none (the key
 * is there, as in the peer's result); the explain is made when first read (`explain()` gives
 * its JSON text).
 */
function assembled(prompt, systemFlag, explain) {
  let value;
  const read = () => (value ??= JSON.parse(explain()));
  return { prompt, systemFlag, get explain() { return read(); }, set explain(v) { value = v; }, [INSPECT]: inspectAssembled };
}

/** Messages in the peer's shapes (`speaker.type`), not our snapshot format's (`speaker.kind`). */
function peerShaped(messages) {
  return (
    Array.isArray(messages) &&
    messages.every((m) => m !== null && typeof m === 'object' && m.speaker !== null && typeof m.speaker === 'object' && 'type' in m.speaker)
  );
}

// ---------------------------------------------------------------------------------------------
// Arguments

/**
 * `call()`, with an input the core's reader refused (its message names the call: `addMessage(message):
 * speaker.id: missing`) thrown as a `TypeError`, as the peer throws for a bad argument. Anything
 * else (the web build used before `init()`) is thrown as it is.
 */
function refused(call) {
  try {
    return call();
  } catch (e) {
    if (e instanceof Error && !(e instanceof TypeError) && namesTheCall(e.message)) {
      throw new TypeError(e.message);
    }
    throw e;
  }
}

/**
 * A non-negative integer, or `undefined` when absent; NaN, infinities, negative and fractional
 * numbers are refused by name, in the words of the core's readers and of the binding's
 * `whole_number` (wasm/src/js.rs).
 */
function wholeNumber(value, argument) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    const found = typeof value === 'number' ? String(value) : describe(value);
    throw new TypeError(`${argument}: expected a non-negative integer, found ${found}`);
  }
  // The core counts in wasm32's `usize`: a larger number would wrap (2**32 would become 0).
  if (value > MAX_WHOLE) throw new TypeError(`${argument}: ${value} is too large (at most ${MAX_WHOLE})`);
  return value;
}

/** The largest window or budget the core takes (`usize::MAX` on wasm32). */
const MAX_WHOLE = 0xffff_ffff;

/** A byte budget: a {@link wholeNumber} greater than 0 (0 would hold no prompt), or `undefined`. */
function budget(value, argument) {
  const bytes = wholeNumber(value, argument);
  if (bytes === 0) throw new TypeError(`${argument}: must be greater than 0 (a 0-byte budget holds no prompt)`);
  return bytes;
}

/**
 * The peer's `ILogger` option: any object with a `warn(message)` method and, if it has one, a
 * `debug(message)` method, or nothing.
 */
function logger(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || typeof value.warn !== 'function') {
    throw new TypeError(`new ContextManager(options): logger: expected an object with a warn(message) method, found ${describe(value)}`);
  }
  const debug = value.debug;
  if (debug !== undefined && debug !== null && typeof debug !== 'function') {
    throw new TypeError(`new ContextManager(options): logger.debug: expected a function (debug(message)), found ${describe(debug)}`);
  }
  return value;
}

let encoder;
/** Bytes of `text` in UTF-8 (for the logger's message only). */
function utf8Length(text) {
  return (encoder ??= new TextEncoder()).encode(text).length;
}

function hook(value, name) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'function') {
    throw new TypeError(`new ContextManager(options): ${name}: expected a function, found ${describe(value)}`);
  }
  return value;
}

/**
 * The message as stored: `{id, ...message}` with `timestamp` in place (or last, when a string
 * or milliseconds became a `Date`; left out when none was given), as the peer stores it, except
 * that symbol-keyed properties are not copied. The usual shapes (the keys below, in these
 * orders: what callers and the peer's coordinator pass) are built as object literals, about
 * twice as fast as the spread.
 */
function storedMessage(id, m, timestamp) {
  let n = 0;
  let k0;
  let k1;
  let k2;
  let k3;
  for (const k in m) {
    if (n === 0) k0 = k;
    else if (n === 1) k1 = k;
    else if (n === 2) k2 = k;
    else if (n === 3) k3 = k;
    else return spreadMessage(id, m, timestamp);
    n += 1;
  }
  if (k0 === 'speaker' && k1 === 'content') {
    const routed = n >= 3 && k2 === 'routing';
    const usual = n === 2 || (n === 3 && (routed || k2 === 'timestamp')) || (n === 4 && routed && k3 === 'timestamp');
    if (usual && timestamp === undefined) {
      return routed ? { id, speaker: m.speaker, content: m.content, routing: m.routing } : { id, speaker: m.speaker, content: m.content };
    }
    if (usual) {
      return routed
        ? { id, speaker: m.speaker, content: m.content, routing: m.routing, timestamp }
        : { id, speaker: m.speaker, content: m.content, timestamp };
    }
  } else if (n === 4 && k0 === 'timestamp' && k1 === 'speaker' && k2 === 'content' && k3 === 'routing') {
    if (timestamp === undefined) return { id, speaker: m.speaker, content: m.content, routing: m.routing };
    return { id, timestamp, speaker: m.speaker, content: m.content, routing: m.routing };
  }
  return spreadMessage(id, m, timestamp);
}

/** `storedMessage` for any other shape. */
function spreadMessage(id, m, timestamp) {
  const stored = { id, ...m };
  for (const symbol of Object.getOwnPropertySymbols(stored)) delete stored[symbol];
  if (timestamp === undefined) delete stored.timestamp;
  else stored.timestamp = timestamp;
  return stored;
}

/**
 * The stored timestamp: the `Date` given, or one made from milliseconds or a date string.
 * `argument` names the call (the error message is made only when needed).
 */
function toDate(value, argument) {
  if (value === undefined || value === null) return new Date();
  if (value instanceof Date) {
    const ms = value.getTime();
    if (ms >= 0) return value; // NaN fails too
  }
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : NaN;
  // Only times a `Date` can hold (up to 8.64e15 ms): beyond, `new Date(ms)` is an invalid Date.
  if (!Number.isFinite(ms) || ms < 0 || ms > 8.64e15) {
    // Found, in the words of the binding's `millis` (wasm/src/js.rs).
    const found =
      typeof value === 'number' ? String(value)
        : value instanceof Date ? 'an invalid Date'
          : describe(value);
    throw new TypeError(`${argument}: timestamp: expected a Date, milliseconds since 1970 (at most 8.64e15) or a date string, found ${found}`);
  }
  return new Date(ms);
}

function parsedOrUndefined(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // the core's reader says where the text is wrong
  }
}

/** The id counter after `messages`: one past the highest `msg-N`. */
function nextSeq(messages) {
  let max = 0;
  for (const m of messages) {
    const n = typeof m.id === 'string' ? idNumber(m.id) : -1;
    if (n > max) max = n;
  }
  return max + 1;
}

/** N of an id `msg-N` (N: decimal digits, as the peer's `/^msg-(\d+)$/` and the core read it), else -1. */
function idNumber(id) {
  if (!id.startsWith('msg-')) return -1;
  let i = 4;
  if (i === id.length) return -1;
  let n = 0;
  for (; i < id.length; i++) {
    const d = id.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Clean shapes: what is accepted without asking the core's reader. Conservative: anything
// unusual goes to the reader, which accepts it or names what is wrong.

const isSpeakerType = (t) => t === 'ai' || t === 'human' || t === 'system';
const INTENTS = new Set(['P1_INTERRUPT', 'P2_REPLY', 'P3_EXTEND', 'P1', 'P2', 'P3']);

const absent = (v) => v === undefined || v === null;
const optionalString = (v) => absent(v) || typeof v === 'string';
/** A string with something besides whitespace: settled by its first character, unless that is whitespace. */
function nonBlank(v) {
  if (typeof v !== 'string' || v.length === 0) return false;
  const c = v.charCodeAt(0);
  return (c > 32 && c < 127) || v.trim() !== '';
}

/** Content within the core's limit in UTF-8 bytes, counted only when it may be over. */
function withinLimit(content, max) {
  if (content.length * 3 <= max) return true;
  if (content.length > max) return false;
  let bytes = 0;
  for (let i = 0; i < content.length; i++) {
    const c = content.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < content.length) {
      const d = content.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes <= max;
}

function isCleanSpeaker(s) {
  return (
    typeof s === 'object' &&
    s !== null &&
    isSpeakerType(s.type) &&
    nonBlank(s.id) &&
    typeof s.name === 'string' &&
    optionalString(s.displayName) &&
    s.kind === undefined &&
    !Array.isArray(s)
  );
}

function isStringArray(v) {
  if (!Array.isArray(v)) return false;
  for (const s of v) if (typeof s !== 'string') return false;
  return true;
}

function isCleanRouting(r) {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return false;
  if (r.rawNextMarkers === undefined && r.resolvedAddressees === undefined) return false;
  if (r.rawNextMarkers !== undefined && !isStringArray(r.rawNextMarkers)) return false;
  if (r.resolvedAddressees !== undefined) {
    if (!Array.isArray(r.resolvedAddressees)) return false;
    for (const a of r.resolvedAddressees) {
      if (a === null || typeof a !== 'object' || typeof a.identifier !== 'string') return false;
      if (!optionalString(a.memberId) || !optionalString(a.memberName)) return false;
    }
  }
  if (r.parsedAddressees !== undefined && r.parsedAddressees !== null) {
    if (!Array.isArray(r.parsedAddressees)) return false;
    for (const a of r.parsedAddressees) {
      if (a === null || typeof a !== 'object' || typeof a.name !== 'string') return false;
      if (a.intent !== 'P2' && a.intent !== 'P1' && a.intent !== 'P3') return false;
    }
  }
  if (!optionalString(r.parentMessageId)) return false;
  if (!absent(r.intent) && !INTENTS.has(r.intent)) return false;
  if (r.isDone !== undefined && typeof r.isDone !== 'boolean') return false;
  return true;
}

/** An `addMessage` argument the core's reader accepts as is. */
function isCleanNewMessage(m, max) {
  return isCleanAddition(m, max) && (absent(m.routing) || isCleanRouting(m.routing));
}

/**
 * What `addMessage` checks before storing: speaker and content. The routing, which the peer's
 * router writes and the peer never checks, is checked by the core's reader when a prompt first
 * reads the message (an error then names the stored message and the field): checking it on
 * every addition would make `addMessage` slower than the peer's.
 */
function isCleanAddition(m, max) {
  return isCleanSpeaker(m.speaker) && typeof m.content === 'string' && withinLimit(m.content, max);
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function isCleanTimestamp(t) {
  if (t === undefined) return true;
  if (t instanceof Date) {
    const ms = t.getTime();
    return Number.isFinite(ms) && ms >= 0;
  }
  if (typeof t === 'number') return Number.isSafeInteger(t) && t >= 0;
  return typeof t === 'string' && ISO_DATE.test(t) && t >= '1970';
}

/**
 * For a snapshot object in the peer's shape that the core's reader accepts as is, the id
 * counter after it (one past the highest `msg-N`); 0 for any other snapshot.
 */
function cleanSnapshotIds(s, max) {
  if (s.version !== 1 || !Array.isArray(s.messages) || !optionalString(s.teamTask)) return 0;
  if (!absent(s.timestamp) && !(Number.isSafeInteger(s.timestamp) && s.timestamp >= 0)) return 0;
  // Ids `msg-N` with N rising cannot repeat; any other order goes through a set.
  let ids;
  let last = 0;
  let highest = 0;
  for (const m of s.messages) {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return 0;
    const id = m.id;
    if (!nonBlank(id) || m.at !== undefined) return 0;
    const n = idNumber(id);
    if (n > highest) highest = n;
    if (n > last) last = n;
    else {
      ids ??= new Set(s.messages.map((x) => x?.id));
      if (ids.size !== s.messages.length) return 0;
    }
    if (!isCleanNewMessage(m, max) || !isCleanTimestamp(m.timestamp)) return 0;
  }
  return highest + 1;
}

/** True for a snapshot object the core's reader accepts as is. */
const isCleanSnapshot = (s, max) => cleanSnapshotIds(s, max) > 0;

/** For the shape tests: the clean checks, without a wasm build. */
export const cleanShapes = { isCleanNewMessage, isCleanSnapshot };
