// Session files for the suite, written as a user's bridge would store them
// (docs/architecture.md §6b).

const team = {
  id: 'big', name: 'Big team',
  members: [
    { id: 'kailai', name: 'kailai', displayName: 'Kailai', kind: 'human' },
    { id: 'a1', name: 'a1', displayName: 'Ada', kind: 'ai', agentType: 'claude-code', systemInstruction: 'You plan.' },
    { id: 'a2', name: 'a2', displayName: 'Bo', kind: 'ai', agentType: 'openai-codex' },
    { id: 'a3', name: 'a3', displayName: 'Cy', kind: 'ai', agentType: 'google-gemini', windowSize: 20 },
    { id: 'a4', name: 'a4', displayName: 'Di', kind: 'ai', agentType: 'claude-code' },
  ],
};

/**
 * A session of `messages` messages: a human hands over to a1, each agent to the next, a4 back
 * to the human — the chain the core routes, so the facts replay.
 */
export function bigSession(messages) {
  const facts = [{ type: 'setTeam', team }];
  let at = 1_700_000_000_000;
  const line = (i) => `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(3)}`;
  for (let i = 0; facts.length - 1 < messages; i++) {
    const n = facts.length;
    const step = i % 5;
    at += 1000;
    if (step === 0) facts.push({ type: 'human', text: `[FROM: kailai] ${line(n)} [NEXT: a1]`, sender: null, at });
    else {
      const to = `a${step}`;
      const next = step === 4 ? 'kailai' : `a${step + 1}`;
      facts.push({ type: 'replied', to, text: `${line(n)} [NEXT: ${next}]`, at });
    }
  }
  return { format: 'agent-chatter-session/1', facts };
}

/**
 * A session of `messages` messages of about `kib` KiB each (the chain of `bigSession`): with
 * the default window of 5, every prompt holds about five of them.
 */
export function bigTextSession(messages, kib) {
  const facts = [{ type: 'setTeam', team }];
  let at = 1_700_000_000_000;
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n';
  const text = (n) => `output ${n}: ${line.repeat(Math.ceil((kib * 1024) / line.length))}`;
  for (let i = 0; facts.length - 1 < messages; i++) {
    const n = facts.length;
    const step = i % 5;
    at += 1000;
    if (step === 0) facts.push({ type: 'human', text: `[FROM: kailai] ${text(n)} [NEXT: a1]`, sender: null, at });
    else facts.push({ type: 'replied', to: `a${step}`, text: `${text(n)} [NEXT: ${step === 4 ? 'kailai' : `a${step + 1}`}]`, at });
  }
  return { format: 'agent-chatter-session/1', facts };
}
