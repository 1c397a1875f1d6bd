import Foundation

/// Recorded HTTP exchanges, kept in a file and replayed as stubs (see ``CassetteRecorder`` and
/// ``CassettePlayer``).
///
/// ## The file
///
/// A cassette file is JSON, pretty-printed with sorted keys so that two recordings diff line by
/// line: a ``version`` (``currentVersion``, `1`) and the ``interactions`` in the order they
/// completed. Each interaction holds the request (`method`, `url`, `headers`, `body`), the
/// response (`status`, `headers`, `body`) and `recordedAt` (ISO 8601, to the second). A body is
/// an object with an `encoding`, `utf8` for text or `base64` for other bytes, and its `content`
/// (see ``CassetteBody``); an empty body is left out. Secrets are hidden (`***`) before anything
/// is written.
///
/// ```json
/// {
///   "interactions" : [
///     {
///       "recordedAt" : "2025-06-01T09:30:00Z",
///       "request" : {
///         "headers" : {
///           "Authorization" : "Bearer ***"
///         },
///         "method" : "GET",
///         "url" : "https://api.example.com/users/42?token=***"
///       },
///       "response" : {
///         "body" : {
///           "content" : "{\"id\":42,\"name\":\"Ann\"}",
///           "encoding" : "utf8"
///         },
///         "headers" : {
///           "Content-Type" : "application/json"
///         },
///         "status" : 200
///       }
///     }
///   ],
///   "version" : 1
/// }
/// ```
///
/// The file may be edited by hand (to trim a body, or to add an interaction); loading checks
/// it and fails with ``CassetteError/malformed(file:reason:)`` or
/// ``CassetteError/unsupportedVersion(file:found:supported:)``.
public struct Cassette: Codable, Sendable, Equatable {
    /// The format version this MoyaTesting writes, and the newest it reads.
    public static let currentVersion = 1

    /// The format version of the file: a cassette made in code has ``currentVersion``.
    public var version: Int

    /// The exchanges, in the order they completed.
    public var interactions: [CassetteInteraction]

    /// Creates a cassette in the current format.
    ///
    /// - Parameter interactions: The exchanges, in order.
    public init(interactions: [CassetteInteraction] = []) {
        self.version = Self.currentVersion
        self.interactions = interactions
    }

    /// Reads the cassette in `data`, the contents of a cassette file.
    ///
    /// - Parameters:
    ///   - data: The file's contents.
    ///   - name: How errors name the file; `"the data"` by default.
    /// - Throws: ``CassetteError/malformed(file:reason:)`` when `data` is not a cassette,
    ///   ``CassetteError/unsupportedVersion(file:found:supported:)`` when its version is newer
    ///   than ``currentVersion``.
    public init(data: Data, name: String = "the data") throws {
        struct VersionProbe: Decodable {
            var version: Int?
        }
        let probe: VersionProbe
        do {
            probe = try JSONDecoder().decode(VersionProbe.self, from: data)
        } catch {
            throw CassetteError.malformed(file: name, reason: "not a JSON object (\(Self.describe(error)))")
        }
        guard let version = probe.version else {
            throw CassetteError.malformed(file: name, reason: "no \"version\" member")
        }
        guard version <= Self.currentVersion else {
            throw CassetteError.unsupportedVersion(file: name, found: version, supported: Self.currentVersion)
        }
        guard version >= 1 else {
            throw CassetteError.malformed(file: name, reason: "version \(version) does not exist; versions start at 1")
        }
        do {
            self = try Self.decoder.decode(Cassette.self, from: data)
        } catch {
            throw CassetteError.malformed(file: name, reason: Self.describe(error))
        }
        for (index, interaction) in self.interactions.enumerated() {
            for (part, body) in [("request", interaction.request.body), ("response", interaction.response.body)] {
                if let body, !body.isValid {
                    throw CassetteError.malformed(file: name, reason: "interactions[\(index)].\(part).body: content is not valid base64")
                }
            }
        }
    }

    /// Reads the cassette file at `url`.
    ///
    /// - Parameter url: The file.
    /// - Throws: ``CassetteError/missingFile(_:)`` when there is no file,
    ///   ``CassetteError/malformed(file:reason:)`` or
    ///   ``CassetteError/unsupportedVersion(file:found:supported:)`` when it is not a cassette
    ///   this version reads.
    public init(contentsOf url: URL) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CassetteError.missingFile(url.path)
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CassetteError.malformed(file: url.path, reason: "unreadable (\(error.localizedDescription))")
        }
        try self.init(data: data, name: url.path)
    }

    /// The file's contents: pretty-printed JSON with sorted keys, ending in a line feed.
    ///
    /// - Returns: The encoded cassette.
    /// - Throws: An `EncodingError` (not expected: every member is a string, a number or a date).
    public func encoded() throws -> Data {
        var data = try Self.encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Writes the cassette to `url` atomically: to a temporary file first, renamed over `url`,
    /// so that a reader (or a crash) never sees half a file. Missing directories are created.
    ///
    /// - Parameter url: The file.
    /// - Throws: ``CassetteError/writeFailed(file:reason:)``.
    public func write(to url: URL) throws {
        do {
            let data = try self.encoded()
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url, options: .atomic)
        } catch {
            throw CassetteError.writeFailed(file: url.path, reason: error.localizedDescription)
        }
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// A decoding error in words, with the path of the member at fault
    /// (`interactions[0].response.status`).
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return error.localizedDescription }
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text.isEmpty ? "the top level" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            return "\(parent == "the top level" ? "" : parent + ": ")missing member \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
