import Foundation

/// Why mapping a response's body failed, in more detail than ``MoyaError/jsonMapping(_:)`` and
/// ``MoyaError/stringMapping(_:)`` can carry.
///
/// Those cases hold only the response (their shape is Moya's), and the response in the error
/// is the very response that was mapped. So the detail is kept beside the response instead: the
/// mapping methods ``record(_:for:)`` it just before they throw, and the error's description
/// looks it up with ``recorded(for:error:)``. The note is the response's latest mapping failure
/// of that kind: if the same response fails twice, an error made the first time describes the
/// second failure.
///
/// Notes are held in one table keyed by the response's identity, with a weak reference to the
/// response; entries whose response is gone are dropped as the table grows. Nothing is recorded
/// when mapping succeeds.
enum MappingFailure: Equatable, Sendable {
    /// The body is not JSON (``MoyaError/jsonMapping(_:)``); the text is the parser's message.
    case invalidJSON(String)

    /// The body is empty, so it is not JSON (``MoyaError/jsonMapping(_:)``).
    case emptyBody

    /// The body is not UTF-8 text (``MoyaError/stringMapping(_:)``).
    case notUTF8

    /// The top level of the JSON is not a dictionary, so a key path cannot be followed.
    case notADictionary(keyPath: String)

    /// The key path leads nowhere in the JSON.
    case keyPathNotFound(keyPath: String)

    /// The value at the key path is not a string (``MoyaError/stringMapping(_:)``); `found`
    /// names what it is.
    case notAString(keyPath: String, found: String)

    /// Which ``MoyaError`` case a failure belongs to.
    enum Kind: Sendable {
        /// ``MoyaError/jsonMapping(_:)``.
        case json
        /// ``MoyaError/stringMapping(_:)``.
        case string
    }

    /// The failure in a sentence.
    var reason: String {
        switch self {
        case .invalidJSON(let message):
            return "The body is not valid JSON: \(message)"
        case .emptyBody:
            return "The body is empty."
        case .notUTF8:
            return "The body is not valid UTF-8 text."
        case .notADictionary(let keyPath):
            return "The JSON body is not a dictionary, so it has no key path \"\(keyPath)\"."
        case .keyPathNotFound(let keyPath):
            return "The JSON body has no value at the key path \"\(keyPath)\"."
        case .notAString(let keyPath, let found):
            return "The value at the key path \"\(keyPath)\" is \(found), not a string."
        }
    }

    /// Records `failure` for `response`, replacing an earlier note of the same kind.
    ///
    /// - Parameters:
    ///   - failure:  What went wrong.
    ///   - kind:     The error that is about to be thrown.
    ///   - response: The response being mapped (the one the error will hold).
    static func record(_ failure: MappingFailure, as kind: Kind, for response: Response) {
        notes.withLock { table in
            table.entries[ObjectIdentifier(response)] = Note(response: response, kind: kind, failure: failure)
            table.pruneIfNeeded()
        }
    }

    /// The failure recorded for the response of a mapping error, if any.
    ///
    /// - Parameters:
    ///   - kind:     The case of the error.
    ///   - response: The response the error holds.
    static func recorded(_ kind: Kind, for response: Response) -> MappingFailure? {
        notes.withLock { table in
            guard let note = table.entries[ObjectIdentifier(response)], note.response === response, note.kind == kind else {
                return nil
            }
            return note.failure
        }
    }

    /// One recorded failure.
    private struct Note {
        /// The response; `nil` once it is gone (its identifier may then be reused).
        weak var response: Response?
        /// The error case the failure belongs to.
        let kind: Kind
        /// The failure.
        let failure: MappingFailure
    }

    /// The notes, and when to next drop those of released responses.
    private struct Table {
        var entries: [ObjectIdentifier: Note] = [:]
        var pruneThreshold = 64

        /// Drops the notes of released responses once the table has doubled since the last time.
        mutating func pruneIfNeeded() {
            guard entries.count >= pruneThreshold else { return }
            entries = entries.filter { $0.value.response != nil }
            pruneThreshold = max(64, entries.count * 2)
        }
    }

    /// Every note, behind one lock.
    private static let notes = Protected(Table())
}
