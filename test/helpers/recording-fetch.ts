/** One call the client made through its `fetch`. */
export interface FetchCall {
    url: string;
    method: string;
    headers: Record<string, string>;
    redirect: string;
}

/** A fetch that records every call (URL, method, headers) and then calls the real one. */
export function recordingFetch(onCall: (call: FetchCall) => void = () => undefined): { fetch: (input: string, init: RequestInit) => Promise<Response>; calls: FetchCall[] } {
    const calls: FetchCall[] = [];
    return {
        calls,
        fetch: (input, init) => {
            const call = {
                url: input,
                method: init.method ?? 'GET',
                headers: { ...(init.headers as Record<string, string> | undefined) },
                redirect: init.redirect ?? 'follow'
            };
            calls.push(call);
            onCall(call);
            return fetch(input, init);
        }
    };
}
