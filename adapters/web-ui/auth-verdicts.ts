// The authentication verdicts of one email (SPF, each DKIM signature, DMARC with its
// policy, ARC) as badges: green for pass, red for fail, grey for every other word
// (softfail, neutral, none, temperror, permerror), each word shown as the service said it.

import type { AuthCheck } from '../client/index';
import { el } from './dom';
import { formatTime } from './format';

/** A verdict word as a badge. */
function badge(result: string): HTMLSpanElement {
    const kind = result === 'pass' ? 'pass' : result === 'fail' ? 'fail' : 'other';
    return el('span', { class: `badge badge-${kind}`, 'data-result': result }, result);
}

const detail = (...parts: (string | null | undefined)[]) => {
    const text = parts.filter((p) => p).join(', ');
    return text ? el('span', { class: 'detail' }, ` ${text}`) : null;
};

/** One row of the verdict list: the mechanism, its badge(s) and what it was about. */
function row(name: string, ...value: (Node | null)[]): Node[] {
    return [el('dt', {}, name), el('dd', { 'data-check': name.toLowerCase() }, ...value)];
}

/** The verdicts as a definition list, then when they were reached. */
export function authVerdicts(result: AuthCheck): Node[] {
    // An unsigned email has one verdict, `none`, with neither domain nor selector.
    const dkim = result.dkim.map((sig) => el('span', { class: 'signature' }, badge(sig.result),
        sig.domain === null ? detail('no signature') : detail(`d=${sig.domain}`, sig.selector && `s=${sig.selector}`)));
    return [
        el('dl', { class: 'auth' },
            ...row('SPF', badge(result.spf.result), detail(result.spf.domain)),
            ...row('DKIM', ...dkim),
            ...row('DMARC', badge(result.dmarc.result), detail(result.dmarc.domain, result.dmarc.policy && `policy ${result.dmarc.policy}`)),
            ...row('ARC', badge(result.arc.result))),
        el('p', { class: 'detail', id: 'auth-checked-at' }, `Checked at ${formatTime(result.checkedAt)}.`)
    ];
}
