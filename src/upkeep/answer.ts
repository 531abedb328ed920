import type { Message, ToolDef } from '../types.js';
import type { PromptMessage, PromptTool, UpkeepRequest } from './request.js';

/** A chat model's answer to a probe turn is at most this many tokens: what `--dry-run` counts it at, at most. */
export const ANSWER_MAX_TOKENS = 500;

/**
 * A probe turn's first prompt as it goes to the chat model (`answers:` in a
 * study): the policy's messages with their roles, names, tool calls and tool
 * results, and the tool definitions offered with them, as OpenAI's chat API
 * takes them. What ctxsim adds to a message (its origin, turn, score) is not
 * sent.
 */
export function answerRequest(model: string, messages: readonly Message[], tools: readonly ToolDef[] | undefined): Extract<UpkeepRequest, { kind: 'answer' }> {
  return {
    kind: 'answer',
    model,
    messages: messages.map(promptMessage),
    ...(tools?.length && { tools: tools.map(promptTool) }),
    maxTokens: ANSWER_MAX_TOKENS,
  };
}

function promptMessage(m: Message): PromptMessage {
  return {
    role: m.role,
    content: m.content,
    ...(m.name !== undefined && { name: m.name }),
    ...(m.toolCalls?.length && { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }),
    ...(m.toolCallId !== undefined && { tool_call_id: m.toolCallId }),
  };
}

function promptTool(t: ToolDef): PromptTool {
  return {
    type: 'function',
    function: { name: t.name, ...(t.description !== undefined && { description: t.description }), ...(t.parameters !== undefined && { parameters: { ...t.parameters } }) },
  };
}
