// The Swift examples of Sources/Moya/Moya.docc/GeneratedOpenAPIClients.md are compiled in this
// target, against the client generated from openapi.yaml (module HTTPBinAPI), and its `@Test`
// examples run. Moya's `DocExamples` plugin extracts them: it picks, in Moya's DocC catalogs, the
// articles marked `<!-- example-package: OpenAPIClient -->`, and the Moya package's own
// DocExamplesTests leaves those out. The rules for writing an example are in Moya's
// Tests/DocExamplesTests/DocExamples.swift.
