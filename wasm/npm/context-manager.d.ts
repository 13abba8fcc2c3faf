
/** Parses every marker of `text`: the peer's `MessageRouter.parseMessage` result plus `isDone`. */
export declare function parseMessage(text: string): ParseResult;
/** The agent view of a message: removes FROM, TEAM_TASK, NEXT, DONE and DROP markers. */
export declare function stripAll(text: string): string;
/** The stored-content view: removes NEXT, DONE and DROP; keeps FROM and TEAM_TASK. */
export declare function stripRouting(text: string): string;

/**
 * A drop-in for `@testany/agent-chatter-core`'s `ContextManager`: the messages live in JS, in
 * the peer's shapes; prompts are built by the Rust core in wasm.
 */
export declare class ContextManager {
    /** Defaults, the peer's: window 10 (0 gives no history), budget 768 KiB. */
    constructor(options?: ContextManagerOptions | null);
    /** Stores a message under the next `msg-N` id and returns it (then calls `onMessageAdded`). */
    addMessage(message: NewConversationMessage): ConversationMessage;
    /** Every stored message, oldest first (a new array each call; the same objects). */
    getMessages(): ConversationMessage[];
    /** The newest message, or `null`. */
    getLatestMessage(): ConversationMessage | null;
    /** Sets the team task, cut at 5 KiB on a character boundary (`""` leaves none and reads back as `""`, as in the peer). */
    setTeamTask(task: string): void;
    /** The team task, or `null`. */
    getTeamTask(): string | null;
    /** The assembler input for `agentId`: the latest message as current and the window before it. */
    getContextForAgent(agentId: string, agentType?: string | null, options?: AgentContextOptions | null): AssemblerInput;
    /** Assembles `input` in `agentType`'s format within `input.maxBytes`. */
    assemblePrompt(agentType: string, input: AssemblerInput): AssemblerOutput;
    /** Empties the store and the team task, restarts ids at `msg-1`. */
    clear(): void;
    /** `{messages, teamTask, timestamp, version: 1}` in the peer's shapes, taken now. */
    exportSnapshot(): ContextSnapshot;
    /** Replaces the state with a snapshot (the peer's or ours, object or JSON text); on error nothing changes. */
    importSnapshot(snapshot: ContextSnapshot | string): void;
    /**
     * Not offered: always throws, naming what to use instead. The peer's routing-v3 context is
     * what `Conversation` builds for its deliveries (policy `parent`, docs/architecture.md §6, §7).
     * @deprecated not offered by this package
     */
    getContextForRoute(...args: unknown[]): never;
}
