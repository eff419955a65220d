// Evaluates GitHub Actions expressions with GitHub's own evaluator (@actions/expressions)
// for the Python workflow tests. One JSON request per stdin line, one JSON answer per line:
//   {"kind": "condition", "text": "...", "context": {...}, "status": {...}} -> {"value": true}
//   {"kind": "template", "text": "...", "context": {...}}                   -> {"value": ...}
// Errors come back as {"error": "..."} so the caller can tell a bad expression from a crash.
//
// The library has no job-status functions: GitHub supplies success(), failure(), cancelled()
// and always() from the state of the run, so the caller passes that state in `status`. An
// `if:` without any of them is evaluated as `success() && (<if>)`, as GitHub documents.
import { createInterface } from "node:readline";
import { Evaluator, Lexer, Parser, data } from "@actions/expressions";
import { Binary, FunctionCall, Grouping, IndexAccess, Logical, Unary } from "@actions/expressions/ast";
import { truthy } from "@actions/expressions/result";

const STATUS_FUNCTIONS = ["success", "failure", "cancelled", "always"];

function parse(text, contextNames) {
  const functions = STATUS_FUNCTIONS.map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
  return new Parser(new Lexer(text).lex().tokens, contextNames, functions).parse();
}

function statusFunctions(status) {
  const values = {
    success: status.success,
    failure: status.failure,
    cancelled: status.cancelled,
    always: true,
  };
  return new Map(
    Object.entries(values).map(([name, value]) => [
      name,
      { name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(Boolean(value)) },
    ]),
  );
}

function callsStatusFunction(node) {
  if (node instanceof FunctionCall) {
    if (STATUS_FUNCTIONS.includes(node.functionName.lexeme.toLowerCase())) return true;
    return node.args.some(callsStatusFunction);
  }
  if (node instanceof Logical) return node.args.some(callsStatusFunction);
  if (node instanceof Binary) return callsStatusFunction(node.left) || callsStatusFunction(node.right);
  if (node instanceof Unary) return callsStatusFunction(node.expr);
  if (node instanceof Grouping) return callsStatusFunction(node.group);
  if (node instanceof IndexAccess) return callsStatusFunction(node.expr) || callsStatusFunction(node.index);
  return false;
}

// Splits "a ${{ x }} b" into literal and expression parts; `}}` inside a quoted string
// does not end an expression.
function segments(text) {
  const parts = [];
  let rest = 0;
  for (;;) {
    const open = text.indexOf("${{", rest);
    if (open < 0) break;
    let i = open + 3;
    let quoted = false;
    for (; i < text.length; i++) {
      if (text[i] === "'") quoted = !quoted;
      else if (!quoted && text.startsWith("}}", i)) break;
    }
    if (i >= text.length) throw new Error(`unclosed \${{ in ${JSON.stringify(text)}`);
    if (open > rest) parts.push({ literal: text.slice(rest, open) });
    parts.push({ expression: text.slice(open + 3, i) });
    rest = i + 2;
  }
  if (rest < text.length) parts.push({ literal: text.slice(rest) });
  return parts;
}

function evaluate(text, context, functions) {
  const names = context.pairs().map((pair) => pair.key);
  return new Evaluator(parse(text, names), context, functions).evaluate();
}

function condition(request, context) {
  let text = request.text.trim();
  const parts = segments(text);
  if (parts.length === 1 && parts[0].expression !== undefined) text = parts[0].expression;
  else if (parts.some((part) => part.expression !== undefined)) {
    throw new Error(`an if: mixes text and \${{ }}: ${JSON.stringify(request.text)}`);
  }
  const functions = statusFunctions(request.status);
  const names = context.pairs().map((pair) => pair.key);
  const tree = parse(text || "success()", names);
  if (!callsStatusFunction(tree) && !request.status.success) return false;
  return truthy(new Evaluator(tree, context, functions).evaluate());
}

function template(request, context) {
  const parts = segments(request.text);
  const functions = statusFunctions({ success: true, failure: false, cancelled: false });
  if (parts.length === 1 && parts[0].expression !== undefined) {
    const value = evaluate(parts[0].expression, context, functions);
    return JSON.parse(JSON.stringify(value, data.replacer));
  }
  return parts
    .map((part) =>
      part.literal !== undefined ? part.literal : evaluate(part.expression, context, functions).coerceString(),
    )
    .join("");
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let answer;
  try {
    const request = JSON.parse(line);
    const context = JSON.parse(JSON.stringify(request.context ?? {}), data.reviver);
    const handler = request.kind === "condition" ? condition : template;
    answer = { value: handler(request, context) };
  } catch (error) {
    answer = { error: String(error?.message ?? error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
