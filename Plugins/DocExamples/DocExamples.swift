import Foundation
import PackagePlugin

/// Compiles the Swift examples of the documentation: for README.md, MIGRATION.md, the example
/// program's README, every article of the DocC catalogs and every source file of the libraries
/// (their documentation comments), runs `DocExampleExtractor` to write a Swift file that the target it is applied
/// to (`DocExamplesTests`) then compiles. A broken example fails the build, and the compiler's
/// message names the Markdown file and line.
///
/// An article whose examples need a package of their own (a generated OpenAPI client) says so
/// with a one-line `<!-- example-package: Name -->`: the Moya package's target leaves it out,
/// and the plugin applied to a target of the package `Name` (which depends on Moya) extracts
/// that article only.
@main
struct DocExamples: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let extractor = try context.tool(named: "DocExampleExtractor")
        let ownPackage = context.package.displayName
        guard let moya = Self.moyaPackage(from: context.package) else {
            throw DocExamplesError.noMoyaPackage(ownPackage)
        }
        let root = moya.directoryURL
        let isMoya = moya.id == context.package.id
        var documents = isMoya ? ["README.md", "MIGRATION.md", "Examples/HTTPBinClient/README.md"].map { root.appending(path: $0) } : []
        for catalog in ["Sources/Moya/Moya.docc", "Sources/CombineMoya/CombineMoya.docc", "Sources/MoyaTesting/MoyaTesting.docc"] {
            let directory = root.appending(path: catalog)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            for name in names.filter({ $0.hasSuffix(".md") }).sorted() {
                let document = directory.appending(path: name)
                let package = try Self.examplePackage(of: document)
                if package == (isMoya ? nil : ownPackage) {
                    documents.append(document)
                }
            }
        }
        // Contexts shared by several documents; every document is extracted again when one changes.
        let contexts = root.appending(path: "Tests/DocExamplesTests/Contexts")
        let contextFiles = try FileManager.default.contentsOfDirectory(atPath: contexts.path)
            .filter { $0.hasSuffix(".swift") }.sorted().map { contexts.appending(path: $0) }
        var commands: [Command] = documents.map { document -> Command in
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
        // The examples in the libraries' documentation comments, which DocC shows on each
        // symbol's page. They share the context `SourceComments`. Those of RxMoya and
        // ReactiveMoya are compiled only with their trait enabled.
        guard isMoya else { return commands }
        let libraries = [
            "Sources/Moya": nil, "Sources/CombineMoya": nil, "Sources/MoyaTesting": nil, "Sources/MoyaPostgres": nil, "Sources/RxMoya": "RxMoya",
            "Sources/ReactiveMoya": "ReactiveMoya",
        ]
        for (library, trait) in libraries.sorted(by: { $0.key < $1.key }) {
            let directory = root.appending(path: library)
            guard let walker = FileManager.default.enumerator(atPath: directory.path) else { continue }
            for case let path as String in walker where path.hasSuffix(".swift") {
                let file = directory.appending(path: path)
                let relative = (library + "/" + path).split(separator: "/").joined(separator: "_")
                let output = context.pluginWorkDirectoryURL.appending(path: relative.replacingOccurrences(of: ".swift", with: "_examples.swift"))
                commands.append(
                    .buildCommand(
                        displayName: "Extracting the Swift examples of \(path)",
                        executable: extractor.url,
                        arguments: [file.path, contexts.path, output.path, "--default-context", "SourceComments"]
                            + (trait.map { ["--trait", $0] } ?? []),
                        inputFiles: [file] + contextFiles,
                        outputFiles: [output]
                    ))
            }
        }
        return commands
    }

    /// The Moya package: `package` itself, or the first of its dependencies (direct or not)
    /// named Moya.
    static func moyaPackage(from package: Package) -> Package? {
        if package.displayName == "Moya" { return package }
        for dependency in package.dependencies {
            if let moya = moyaPackage(from: dependency.package) { return moya }
        }
        return nil
    }

    /// The package named by the document's `<!-- example-package: Name -->` line, if any.
    static func examplePackage(of document: URL) throws -> String? {
        let text = try String(contentsOf: document, encoding: .utf8)
        let marker = "<!-- example-package:"
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(marker), trimmed.hasSuffix("-->") {
                return trimmed.dropFirst(marker.count).dropLast(3).trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// Why the plugin cannot run.
enum DocExamplesError: Error, CustomStringConvertible {
    /// The plugin is applied in a package that does not depend on Moya.
    case noMoyaPackage(String)

    var description: String {
        switch self {
        case .noMoyaPackage(let name): "DocExamples: the package \(name) does not depend on the Moya package"
        }
    }
}
