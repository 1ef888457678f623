/**
 * The REST API reference, rendered from the generated OpenAPI document (server component: no
 * client bundle, no third-party script, works offline). One card per endpoint, grouped by tag.
 */
import { Badge } from "@/components/ui/badge";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import type { appOpenApiDocument } from "@/server/api/rest-app";

type Doc = ReturnType<typeof appOpenApiDocument>;
interface Parameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: { type?: string; enum?: string[]; default?: unknown; anyOf?: Array<{ type?: string }> };
}
interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  parameters: Parameter[];
  requestBody?: unknown;
  responses: Record<string, { content?: { "application/json"?: { schema?: { $ref?: string; type?: string; items?: { $ref?: string } } } } }>;
}

function typeOf(schema: Parameter["schema"]): string {
  if (schema.enum) return schema.enum.join(" | ");
  if (schema.anyOf) return schema.anyOf.map((s) => s.type ?? "…").join(" | ");
  return schema.type ?? "any";
}

function responseName(op: Operation): string {
  const ok = op.responses["200"] ?? op.responses["201"];
  const schema = ok?.content?.["application/json"]?.schema;
  const ref = schema?.$ref ?? schema?.items?.$ref;
  const name = ref?.split("/").pop();
  if (!name) return "JSON";
  return schema?.type === "array" ? `${name}[]` : name;
}

export function ApiReference({ doc, origin }: { doc: Doc; origin: string }) {
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, Operation>).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
  const tags = [...new Set(operations.map((o) => o.op.tags[0] ?? "Other"))];
  return (
    <div className="mx-auto max-w-5xl space-y-6 p-6" data-testid="api-reference">
      <div className="space-y-2">
        <h1 className="text-2xl font-semibold">REST API</h1>
        <p className="text-sm text-muted-foreground">{doc.info.description}</p>
        <p className="text-sm">
          Base URL <code className="rounded bg-muted px-1">{origin}/api/v1</code> ·{" "}
          <a className="text-primary underline-offset-4 hover:underline" href="/api/v1/openapi.json">
            openapi.json
          </a>{" "}
          (OpenAPI {doc.openapi}, version {doc.info.version})
        </p>
      </div>
      {tags.map((tag) => (
        <section key={tag} className="space-y-3">
          <h2 className="text-lg font-semibold">{tag}</h2>
          {operations
            .filter((o) => (o.op.tags[0] ?? "Other") === tag)
            .map(({ path, method, op }) => (
              <Card key={`${method} ${path}`} data-testid={`endpoint-${method}-${path}`}>
                <CardHeader className="pb-2">
                  <CardTitle className="flex items-center gap-2 font-mono text-sm">
                    <Badge variant={method === "GET" ? "secondary" : "default"}>{method}</Badge>
                    <span>/api/v1{path}</span>
                  </CardTitle>
                  <p className="text-sm text-muted-foreground">
                    {op.summary} · returns <code>{responseName(op)}</code>
                    {op.requestBody ? " · JSON body with the options below" : ""}
                  </p>
                </CardHeader>
                <CardContent className="space-y-2">
                  {op.parameters.length > 0 ? (
                    <Table>
                      <TableHeader>
                        <TableRow>
                          <TableHead>Parameter</TableHead>
                          <TableHead>In</TableHead>
                          <TableHead>Type</TableHead>
                          <TableHead>Notes</TableHead>
                        </TableRow>
                      </TableHeader>
                      <TableBody>
                        {op.parameters.map((p) => (
                          <TableRow key={p.name}>
                            <TableCell className="font-mono text-xs">
                              {p.name}
                              {p.required ? " *" : ""}
                            </TableCell>
                            <TableCell className="text-xs">{p.in}</TableCell>
                            <TableCell className="font-mono text-xs">{typeOf(p.schema)}</TableCell>
                            <TableCell className="text-xs text-muted-foreground">
                              {p.description ?? ""}
                              {p.schema.default !== undefined ? ` default ${JSON.stringify(p.schema.default)}` : ""}
                            </TableCell>
                          </TableRow>
                        ))}
                      </TableBody>
                    </Table>
                  ) : null}
                  <pre className="overflow-x-auto rounded bg-muted p-2 text-xs">
                    {`curl -X ${method} '${origin}/api/v1${path}' -H 'Authorization: Bearer sx_…'${method === "POST" ? ` -H 'content-type: application/json' -d '{}'` : ""}`}
                  </pre>
                </CardContent>
              </Card>
            ))}
        </section>
      ))}
    </div>
  );
}
