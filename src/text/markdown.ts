/** The command that writes the generated docs pages (docs/policy-parameters.md, docs/columns.md): scripts/gen-docs.mjs. */
export const DOCS_COMMAND = 'npm run gen:docs';

/** A cell of a generated docs table: one line (whitespace runs made one space), pipes escaped. */
export function docsCell(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
}
