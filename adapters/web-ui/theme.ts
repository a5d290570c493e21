// Dark or light: the system's scheme (prefers-color-scheme, which ui.css follows) until the
// person picks one with the header's button; the pick is kept in localStorage, so it
// outlives the tab, unlike the key. It holds no mail data, only "dark" or "light".

import { byId } from './dom';

const STORAGE_KEY = 'inbox-capture.theme';
type Theme = 'dark' | 'light';

function storedTheme(): Theme | null {
    try {
        const value = localStorage.getItem(STORAGE_KEY);
        return value === 'dark' || value === 'light' ? value : null;
    }
    catch {
        // Storage disabled: the system's scheme, and a pick lasts until the page is left.
        return null;
    }
}

/** The scheme shown now: the pick, else the system's. */
function currentTheme(): Theme {
    return storedTheme() ?? (document.documentElement.dataset.theme as Theme | undefined) ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
}

/** Applies a kept pick and wires the toggle button (its pressed state: dark mode on). */
export function themeToggle(): void {
    const button = byId<HTMLButtonElement>('theme-toggle');
    const show = (theme: Theme) => button.setAttribute('aria-pressed', String(theme === 'dark'));
    const kept = storedTheme();
    if (kept) {
        document.documentElement.dataset.theme = kept;
    }

    show(currentTheme());
    // The system's scheme may change while no pick is kept: the button follows it.
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => show(currentTheme()));
    button.addEventListener('click', () => {
        const next: Theme = currentTheme() === 'dark' ? 'light' : 'dark';
        document.documentElement.dataset.theme = next;
        try {
            localStorage.setItem(STORAGE_KEY, next);
        }
        catch {
            // See storedTheme().
        }

        show(next);
    });
}
