/** Intent of a `[NEXT: name !P1]` addressee; `P2` when not written. */
export type Intent = "P1" | "P2" | "P3";

/** One `[NEXT]` addressee as written. */
export interface ParsedAddressee {
  name: string;
  intent: Intent;
}

/** Result of `parseMessage`: the peer's `MessageRouter.parseMessage` result plus `isDone`. */
export interface ParseResult {
  /** `[NEXT]` names, in order. */
  addressees: string[];
  /** The same names with their intent. */
  parsedAddressees: ParsedAddressee[];
  /** `stripRouting(text)`: NEXT, DONE and DROP removed; FROM and TEAM_TASK kept. */
  cleanContent: string;
  /** `[FROM: x]` (first wins), or `null`. */
  fromMember: string | null;
  /** `[TEAM_TASK: x]` (last wins); `""` for `[TEAM_TASK:]` (clears the task); `null` when absent. */
  teamTask: string | null;
  /** `[DROP: a, b]` names; `["ALL"]` for `[DROP: ALL]`; `[]` when absent. */
  dropTargets: string[];
  /** `[DONE]` present. */
  isDone: boolean;
}
