/**
 * The default place where the library says what it did (a store connected, keys changed): standard
 * error, never standard output, which a stdio MCP server speaks its protocol on. In Node, `console.info`
 * and `console.log` write to standard output, so the default does not use them.
 */
export const standardError: { info(message: string): void; warn(message: string): void } = {
  info(message: string): void {
    console.error(message);
  },
  warn(message: string): void {
    console.warn(message);
  },
};
