/** The answer of the HTML compatibility check (docs/api.md, "Checks"). */
export interface HtmlCheckResult {
    /** The caniemail client ids checked, e.g. `outlook.windows`. */
    clients: string[];
    /** 0–100: the share of (feature found, client) pairs supported, a partial one counting half. */
    score: number;
    /** The features some checked client lacks or half-supports, worst first. */
    findings: HtmlFinding[];
    /** Where the support data comes from, and its date. */
    data: { source: 'caniemail'; updated: string };
    /** `false` when the email has no HTML body (then nothing was checked). */
    html?: false;
}

/** One feature of the HTML that some checked client lacks or half-supports. */
export interface HtmlFinding {
    /** caniemail's title of the feature, e.g. `display:flex`. */
    title: string;
    slug?: string;
    url?: string;
    /** caniemail's category: `html`, `css`, `image` or `others`. */
    category: string;
    /** Clients without support. */
    unsupported: string[];
    /** Clients with partial support. */
    partial: string[];
    /** How often the feature occurs in the HTML. */
    count: number;
}

/** The client families checked when the request names none. */
export const DEFAULT_CLIENT_GLOBS: readonly string[] = ['gmail.*', 'outlook.*', 'apple-mail.*', 'yahoo.*', 'samsung-email.*'];
