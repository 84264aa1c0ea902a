/** Whether parsed JSON is an object (not null, not an array), the shape RFC 7047 uses for rows, tables and schemas. */
export function isJsonObject(json: unknown): json is Record<string, unknown> {
  return typeof json === 'object' && json !== null && !Array.isArray(json);
}
