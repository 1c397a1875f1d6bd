import Foundation

/// A program of this package that the tests run as a child process (`MoyaCacheWriter`,
/// `MoyaDownloader`): `swift build --build-tests` builds it beside the test bundle.
struct BuiltProgram: Error, CustomStringConvertible {
    /// The places looked at when the program was not found.
    let searched: [String]
    /// The program's name.
    let name: String

    var description: String {
        "\(name) is not built (looked at \(searched.joined(separator: ", "))); `swift build --build-tests` builds it"
    }

    /// The program called `name`, in the test bundle's build folder or the one above it.
    static func locate(_ name: String) throws -> URL {
        let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [buildDirectory, buildDirectory.deletingLastPathComponent()].map { $0.appendingPathComponent(name) }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw BuiltProgram(searched: candidates.map(\.path), name: name)
        }
        return found
    }
}
