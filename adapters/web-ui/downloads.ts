// Downloads need the key (the API answers them with a 302 to a time-limited link), so
// they cannot be plain links: the bytes are fetched with the header and saved from a
// blob: URL under a safe file name.

/** A file name without path separators or control characters. */
export function safeFilename(name: string, fallback: string): string {
    const cleaned = name.replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, '_').replace(/^\.+/, '').slice(0, 200);
    return cleaned === '' ? fallback : cleaned;
}

/** Hands bytes to the browser as a download named `filename`. */
export function saveBytes(bytes: Uint8Array, filename: string, type: string): void {
    const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type }));
    const link = document.createElement('a');
    link.href = url;
    link.download = filename;
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    link.remove();
    // The download has started from the URL by now; a minute is ample before freeing it.
    window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Copies text to the clipboard; answers whether it worked (needs a secure context or localhost). */
export async function copyText(text: string): Promise<boolean> {
    try {
        await navigator.clipboard.writeText(text);
        return true;
    }
    catch {
        return false;
    }
}
