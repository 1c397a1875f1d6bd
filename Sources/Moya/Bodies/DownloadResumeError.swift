import Foundation

/// Why a download could not go on from where it stopped, or why its file was not accepted.
public enum DownloadResumeError: Error, Sendable, Equatable, LocalizedError, CustomStringConvertible {
    /// The data given to resume with is not resume data this session made, or names a partial
    /// file that is gone or changed. Send the request again without it.
    case invalidResumeData
    /// The target of a resumed request is not a download (`.downloadDestination` or
    /// `.downloadParameters`).
    case notADownload
    /// The server answered a resumed download with a range that does not start where the
    /// partial file ends.
    case unexpectedRange(expectedStart: Int64, contentRange: String)
    /// The finished file does not have the length the server announced.
    case lengthMismatch(expected: Int64, actual: Int64)
    /// The finished file's SHA-256 digest is not the one the server announced (`Repr-Digest`,
    /// `Digest` or `Content-Digest`).
    case digestMismatch

    /// A sentence saying what went wrong, and what to do where there is something to do.
    public var errorDescription: String? {
        switch self {
        case .invalidResumeData:
            return "The resume data is not valid for this session, or its partial file is gone or changed; download the file again without it."
        case .notADownload:
            return "Only a download target can be resumed."
        case .unexpectedRange(let expectedStart, let contentRange):
            return "The server resumed the download at the wrong place (Content-Range: \(contentRange), expected to start at byte \(expectedStart))."
        case .lengthMismatch(let expected, let actual):
            return "The downloaded file has \(actual) bytes; the server announced \(expected)."
        case .digestMismatch:
            return "The downloaded file's SHA-256 digest is not the one the server announced."
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "Download resume error" }
}
