// What the key of this tab reaches, shown in the bar (docs/ui.md, "Opening it"): a team's key
// sees only its own inboxes, and the person should know the list is limited, not empty.

import { withApi } from './api';
import { byId } from './dom';

/** Asks the API for the key's scope and shows it; a key that reaches everything shows nothing. */
export async function showKeyScope(): Promise<void> {
    const shown = byId('key-scope');
    try {
        const key = await withApi((api) => api.currentKey());
        const parts = [key.inboxPrefix === null ? '' : `Inboxes starting with ${key.inboxPrefix}`, key.readOnly ? 'read-only' : ''].filter(Boolean);
        shown.textContent = parts.length > 0 ? `Key ${key.name}: ${parts.join(', ')}` : '';
        shown.hidden = parts.length === 0;
    }
    catch {
        // The lists say what went wrong; the bar stays as it was.
    }
}
