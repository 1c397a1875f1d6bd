import Foundation

/// Where an interrupted download stopped, so that it can go on from there: the partial file the
/// session kept, how many bytes it holds, and the validator that makes the server send the rest
/// of the *same* representation (`If-Range`), or the whole of a new one.
///
/// Users see it only as opaque resume data (``MoyaError/resumeData``), which
/// ``MoyaProvider/request(_:resumingWith:callbackQueue:progress:completion:)`` takes back. Since
/// that data comes back from outside, it is never trusted to name a file: ``validated(in:)``
/// accepts only a file of the session's own, in its temporary directory, of the recorded size.
struct DownloadResume: Codable, Sendable, Equatable {
    /// Marks data as resume data of this format.
    static let currentFormat = "org.moya.resume.1"

    /// ``currentFormat``.
    var format = DownloadResume.currentFormat
    /// The URL of the request that was interrupted.
    let url: String
    /// The partial file's name, in the session's temporary directory.
    let fileName: String
    /// The bytes the partial file holds, the first of the representation.
    let offset: Int64
    /// The `If-Range` value: the response's strong entity tag, or its `Last-Modified` date.
    let validator: String
    /// The length of the whole representation, when the response said.
    let totalLength: Int64?

    /// The prefix of every download file the session names (see ``DownloadFile``).
    static let fileNamePrefix = "moya-download-"

    /// The resume data users hold.
    func encoded() -> Data {
        (try? JSONEncoder().encode(self)) ?? Data()
    }

    /// The resume data in `data`, or `nil` when it is not resume data of this format.
    static func decode(_ data: Data) -> DownloadResume? {
        guard let resume = try? JSONDecoder().decode(DownloadResume.self, from: data), resume.format == currentFormat else { return nil }
        return resume
    }

    /// The partial file in `directory`, when it is one of the session's own and still holds
    /// exactly ``offset`` bytes; `nil` otherwise (the data names another file, the file is gone,
    /// or it changed).
    func validated(in directory: URL) -> URL? {
        guard fileName.hasPrefix(Self.fileNamePrefix), fileName.hasSuffix(".tmp"), !fileName.contains("/"), offset > 0 else { return nil }
        let file = directory.appendingPathComponent(fileName)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            (attributes[.size] as? NSNumber)?.int64Value == offset
        else {
            return nil
        }
        return file
    }

    /// The `If-Range` value of a response, or `nil` when the response cannot be resumed: it
    /// refuses ranges (`Accept-Ranges: none`), or has neither a strong entity tag nor a
    /// `Last-Modified` date. `header` looks a header up by name.
    static func validator(header: (String) -> String?) -> String? {
        if let ranges = header("Accept-Ranges"), ranges.lowercased().contains("none") {
            return nil
        }
        if let tag = header("ETag"), !tag.hasPrefix("W/"), tag.hasPrefix("\"") {
            return tag
        }
        return header("Last-Modified")
    }

    /// The first byte and the whole length in a `Content-Range: bytes FIRST-LAST/LENGTH`
    /// (`LENGTH` may be `*`); `nil` when the value is not of that form.
    static func contentRange(_ value: String) -> (first: Int64, length: Int64?)? {
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
        let rangeAndLength = parts[1].split(separator: "/", maxSplits: 1)
        guard rangeAndLength.count == 2 else { return nil }
        let bounds = rangeAndLength[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last else { return nil }
        let length = Int64(rangeAndLength[1])
        if rangeAndLength[1] != "*", length == nil { return nil }
        return (first, length)
    }
}

/// The SHA-256 digest a server announced for a whole representation, to check a finished
/// download against: `Repr-Digest: sha-256=:BASE64:` (RFC 9530), `Digest: SHA-256=BASE64`
/// (RFC 3230), or, for a whole (`200`) response, `Content-Digest`. Other algorithms are not
/// checked.
struct RepresentationDigest: Sendable, Equatable {
    /// The digest's 32 bytes.
    let sha256: Data

    /// The digest in a response's headers, if it has one this session checks. `header` looks a
    /// header up by name.
    static func sha256(status: Int, header: (String) -> String?) -> RepresentationDigest? {
        var fields = [header("Repr-Digest"), header("Digest")]
        if status == 200 {
            fields.append(header("Content-Digest"))
        }
        for field in fields.compactMap({ $0 }) {
            for member in field.split(separator: ",") {
                let parts = member.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "sha-256" else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: ":"))
                if let bytes = Data(base64Encoded: value), bytes.count == 32 {
                    return RepresentationDigest(sha256: bytes)
                }
            }
        }
        return nil
    }
}

/// A partial file to go on from, and where it stopped: checked resume data
/// (``DownloadResume/validated(in:)``).
///
/// A class, though it is a value that never changes: a request's state, its download sink and
/// its exchange each keep an optional one, almost always `nil`, and one reference there is
/// eight bytes where the value is over a hundred.
final class ResumePoint: Sendable {
    let state: DownloadResume
    /// The partial file, in the session's temporary directory.
    let file: URL

    init(state: DownloadResume, file: URL) {
        self.state = state
        self.file = file
    }
}

/// A download that failed part-way with a partial file the session kept: the error the caller
/// gets, with the resume data attached (``TransportError`` puts it into the translated error).
struct InterruptedDownload: Error {
    /// Why the download stopped.
    let underlying: any Error
    /// Where it stopped.
    let resume: DownloadResume
    /// The partial file, in the session's folder for downloads in progress.
    let file: URL
}
