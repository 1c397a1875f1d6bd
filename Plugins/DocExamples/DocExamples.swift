import Foundation
import PackagePlugin

/// Compiles the Swift examples of the documentation: for README.md, MIGRATION.md, the example
/// program's README and every article of the DocC catalogs, runs `DocExampleExtractor` to write a Swift file that the target it is applied
/// to (`DocExamplesTests`) then compiles. A broken example fails the build, and the compiler's
/// message names the Markdown file and line.
@main
struct DocExamples: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let extractor = try context.tool(named: "DocExampleExtractor")
        let root = context.package.directoryURL
        var documents = ["README.md", "MIGRATION.md", "Examples/HTTPBinClient/README.md"].map { root.appending(path: $0) }
        for catalog in ["Sources/Moya/Moya.docc", "Sources/CombineMoya/CombineMoya.docc"] {
            let directory = root.appending(path: catalog)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            documents += names.filter { $0.hasSuffix(".md") }.sorted().map { directory.appending(path: $0) }
        }
        // Contexts shared by several documents; every document is extracted again when one changes.
        let contexts = root.appending(path: "Tests/DocExamplesTests/Contexts")
        let contextFiles = try FileManager.default.contentsOfDirectory(atPath: contexts.path)
            .filter { $0.hasSuffix(".swift") }.sorted().map { contexts.appending(path: $0) }
        return documents.map { document in
            // Named after the document's path, which is unique: "Sources_Moya_Moya.docc_Targets.swift".
            let relative = document.path.dropFirst(root.path.count).split(separator: "/").joined(separator: "_")
            let output = context.pluginWorkDirectoryURL.appending(path: relative.replacingOccurrences(of: ".md", with: ".swift"))
            return .buildCommand(
                displayName: "Extracting the Swift examples of \(document.lastPathComponent)",
                executable: extractor.url,
                arguments: [document.path, contexts.path, output.path],
                inputFiles: [document] + contextFiles,
                outputFiles: [output]
            )
        }
    }
}
