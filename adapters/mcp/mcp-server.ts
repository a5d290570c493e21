import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type Joi from 'joi';
import { toJsonSchema } from './json-schema';
import { detailLine } from '../error-detail/detail-line';
import { validationWords } from '../error-detail/validation-words';
import { ToolError, type MailAccess } from './mail-access';
import { INPUTS, OUTPUTS, PROGRESS_INTERVAL_MS } from './tool-schemas';
import { TOOLS, type ToolDefinition } from './tools';
import { createAnswerTurns, type AnswerTurns } from './answer-turns';

export { PROGRESS_INTERVAL_MS };

/** What the server tells a client on initialize: how the tools fit together. */
export const INSTRUCTIONS = 'inbox-capture holds the email an application sent, per inbox (the local part of the recipient address). '
    + 'To check a mail: new_inbox gives a fresh address; have the application send to it; wait_for_email waits on the server and gives the email '
    + 'with its one-time codes and links; get_email and get_attachment read more. Errors start with their code (NOT_FOUND, FORBIDDEN, VALIDATION_ERROR, ...).';

/** How the server is set up. */
export interface McpServerOptions {
    /** This package's version, told to clients. */
    version: string;
    /** Where unexpected failures are written (their details never reach the client). */
    log?: (message: string, error: unknown) => void;
    /** Milliseconds between progress notifications (default PROGRESS_INTERVAL_MS). */
    progressIntervalMs?: number;
    /** The turns answers take (shared by every server of one service; default: this server's own). */
    answerTurns?: AnswerTurns;
}

// The list is the same for every server: built once.
let listed: Tool[] | undefined;
const toolList = (): Tool[] => listed ??= TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJsonSchema(INPUTS[tool.name]) as Tool['inputSchema'],
    outputSchema: toJsonSchema(OUTPUTS[tool.name]) as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations }
}));

const byName = new Map(TOOLS.map((tool) => [tool.name as string, tool]));

/** A failure as a tool result: the text starts with its code. */
export function errorResult(code: string, message: string): CallToolResult {
    return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}

/** The arguments after the tool's input schema, or a VALIDATION_ERROR. */
function validated(tool: ToolDefinition, args: unknown): Record<string, unknown> {
    const schema: Joi.ObjectSchema = INPUTS[tool.name];
    const { error, value } = schema.validate(args ?? {});
    if (error) {
        // The API's words for the same rules (docs/api.md, "Errors"), naming the tool's argument.
        throw new ToolError('VALIDATION_ERROR', detailLine(validationWords(error.details, 'arguments', schema)));
    }

    return value as Record<string, unknown>;
}

/**
 * An MCP server (the SDK's) offering the tools over `access`. Connect it to a transport;
 * it serves tools only (no resources or prompts).
 */
export function createMcpServer(access: MailAccess, options: McpServerOptions): Server {
    const log = options.log ?? (() => undefined);
    const progressEvery = options.progressIntervalMs ?? PROGRESS_INTERVAL_MS;
    const server = new Server({ name: 'inbox-capture', version: options.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    const answerTurn = options.answerTurns ?? createAnswerTurns();

    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList() }));

    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
        const tool = byName.get(request.params.name);
        if (!tool) {
            throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(request.params.name)}`);
        }

        const token = request.params._meta?.progressToken;
        const started = Date.now();
        const progress = token === undefined ? undefined : setInterval(() => {
            const seconds = Math.round((Date.now() - started) / 1000);
            void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: seconds, message: `${tool.name}: ${seconds} s` } })
                .catch(() => undefined);
        }, progressEvery);
        try {
            const outcome = await tool.run(validated(tool, request.params.arguments), access, extra.signal);
            await answerTurn();
            return { content: outcome.content, structuredContent: outcome.structured };
        }
        catch (err) {
            if (err instanceof ToolError) {
                return errorResult(err.code, err.message);
            }

            log(`MCP tool ${tool.name} failed`, err);
            return errorResult('INTERNAL_ERROR', 'unexpected failure; details are in the server log');
        }
        finally {
            clearInterval(progress);
        }
    });

    return server;
}
