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
