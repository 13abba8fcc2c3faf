// parseMessage / stripAll / stripRouting through the package (docs/architecture.md §5, §12).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds } from './helpers.mjs';

for (const [build, m] of builds) {
  test(`${build}: parseMessage returns the peer's ParseResult plus isDone, absent values null`, () => {
    assert.deepEqual(m.parseMessage('just text'), {
      addressees: [],
      parsedAddressees: [],
      cleanContent: 'just text',
      fromMember: null,
      teamTask: null,
      dropTargets: [],
      isDone: false,
    });
  });

  test(`${build}: parseMessage reads every marker kind`, () => {
    const r = m.parseMessage(
      '[FROM: kailai] [TEAM_TASK: ship v1] please review [NEXT: max, sarah !P1] [DROP: bob] [DONE]',
    );
    assert.deepEqual(r.addressees, ['max', 'sarah']);
    assert.deepEqual(r.parsedAddressees, [
      { name: 'max', intent: 'P2' },
      { name: 'sarah', intent: 'P1' },
    ]);
    assert.equal(r.fromMember, 'kailai');
    assert.equal(r.teamTask, 'ship v1');
    assert.deepEqual(r.dropTargets, ['bob']);
    assert.equal(r.isDone, true);
    assert.equal(r.cleanContent, '[FROM: kailai] [TEAM_TASK: ship v1] please review');
  });

  test(`${build}: DROP names lose their intent suffix`, () => {
    assert.deepEqual(m.parseMessage('[DROP: max, sarah!P1]').dropTargets, ['max', 'sarah']);
  });

  test(`${build}: DROP ALL is reported as ['ALL']`, () => {
    assert.deepEqual(m.parseMessage('stop [DROP: ALL]').dropTargets, ['ALL']);
  });

  test(`${build}: an empty TEAM_TASK marker asks to clear the task with an empty string`, () => {
    assert.equal(m.parseMessage('[TEAM_TASK:] done with that').teamTask, '');
  });

  test(`${build}: an unclosed NEXT marker is plain text`, () => {
    const r = m.parseMessage('look at [NEXT: max and more');
    assert.deepEqual(r.addressees, []);
    assert.equal(r.cleanContent, 'look at [NEXT: max and more');
  });

  test(`${build}: markers inside fenced code blocks are text`, () => {
    const text = 'use it like this:\n```\n[NEXT: max]\n```';
    assert.deepEqual(m.parseMessage(text).addressees, []);
    assert.equal(m.stripAll(text), text);
  });

  test(`${build}: stripAll removes FROM and TEAM_TASK, stripRouting keeps them`, () => {
    const text = '[FROM: kailai] hello   there [TEAM_TASK: t]\n\n[NEXT: max] bye [DONE]';
    assert.equal(m.stripAll(text), 'hello there\nbye');
    assert.equal(m.stripRouting(text), '[FROM: kailai] hello there [TEAM_TASK: t]\nbye');
  });

  test(`${build}: strip functions keep non-ASCII text intact`, () => {
    assert.equal(m.stripAll('héllo 👋 [NEXT: max]'), 'héllo 👋');
  });

  test(`${build}: long and mixed texts cross whole, as views or as new text`, () => {
    // ASCII first, then text that needs more room than one byte per unit.
    const cjk = '日本語'.repeat(2000);
    assert.equal(m.stripAll(`ascii start ${cjk} [NEXT: max]`), `ascii start ${cjk}`);
    assert.equal(m.stripAll(`${cjk} [NEXT: a] ${cjk}`), `${cjk} ${cjk}`);
    // A view that starts after whitespace and holds a surrogate pair.
    assert.equal(m.stripAll('  👋 x  '), '👋 x');
    // Lone surrogates read as U+FFFD on every path.
    assert.equal(m.stripAll('a\ud800b [DONE]'), 'a\ufffdb');
    assert.equal(m.stripAll('a\udc00 [NEXT: b] c'), 'a\ufffd c');
    const long = 'é'.repeat(5000);
    const parsed = m.parseMessage(`${long} [NEXT: bob !P1, ann]`);
    assert.deepEqual(parsed.parsedAddressees, [{ name: 'bob', intent: 'P1' }, { name: 'ann', intent: 'P2' }]);
    assert.equal(parsed.cleanContent, long);
    assert.equal(m.parseMessage(`x ${long} [DROP: a, b] y`).cleanContent, `x ${long} y`);
    assert.deepEqual(m.parseMessage('[DROP: a, b!P1]').dropTargets, ['a', 'b']);
  });
}

// The JS half's ways back (a view sliced from the input, ASCII as a string, other text as
// UTF-16 in the outbox) against the core's general path: the prompt engine reads the same text
// as a stored message and returns its stripped form inside a prompt, as a plain string.
const ORACLE_TEXTS = [
  'plain ASCII prose, nothing to strip',
  '  padded   ASCII [NEXT: max]  with runs  ',
  '第1条消息：这是我的部分工作, step 5, 修改了什么以及为什么。レビューをお願いします、ありがとう。',
  '[FROM: kailai] 这是我的部分工作 [NEXT: max, sarah !P1] 修改了什么　以及为什么。',
  'レビュー\u3000\u3000お願い [DONE] します、ありがとう。\n\n次の行 [DROP: bob]',
  'Done ✅ step 5 🎉 shipped the fix 🚀👍🏽 — “looks good” 😀👨‍👩‍👧 next.',
  '🎉 [TEAM_TASK: ship 🚀] emoji 👍🏽\u2003and\u00a0spaces [NEXT: max]',
  '\uFEFF leading BOM 日本 [NEXT: max]',
  'lone \uD800 surrogate 日本 [NEXT: max]',
  '```\n  code 日本 [NEXT: max]\n```\nafter 🎉 [NEXT: max]',
];

for (const [build, m] of builds) {
  test(`${build}: marker results on ASCII, CJK and emoji text equal the core's general path`, () => {
    for (const text of ORACLE_TEXTS) {
      const cm = new m.ContextManager();
      cm.addMessage({ speaker: { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' }, content: text });
      const prompt = cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt;
      assert.equal(`[MESSAGE]\n${m.stripAll(text)}`, prompt, text);
      assert.equal(m.parseMessage(text).cleanContent, m.stripRouting(text), text);
      // Stripping is idempotent: what crossed back reads the same when handed in again.
      assert.equal(m.stripAll(m.stripAll(text)), m.stripAll(text), text);
    }
  });
}
