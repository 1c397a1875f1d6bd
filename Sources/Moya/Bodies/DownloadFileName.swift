import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Chooses the file name of a download from its response, and makes server-supplied names safe
/// to use inside a destination directory.
///
/// The sources, in order; the first one that gives a usable name wins:
/// 1. `Content-Disposition`'s `filename*`, then its `filename` (see ``ContentDisposition``);
/// 2. the last path component of the response's URL, percent-decoded;
/// 3. a fresh unique name, `download-<UUID>`.
///
/// Every name from the server goes through ``sanitized(_:)``, so it names one entry directly in
/// the destination directory: never `.`, `..`, an empty name, a path, or a name with control
/// characters.
enum DownloadFileName {
    /// The longest name most file systems accept, in UTF-8 bytes.
    static let maximumLength = 255

    /// The file name for the download answered by `response`.
    ///
    /// - Parameter response: The download's response.
    /// - Returns: A name safe to append to a directory URL.
    static func suggested(for response: HTTPURLResponse) -> String {
        serverName(for: response) ?? unique()
    }

    /// The name the response itself gives, from sources 1 and 2 above, sanitized; `nil` when
    /// neither gives a usable one. `HTTPURLResponse.suggestedFilename` of a session's responses
    /// (``TransportHTTPURLResponse``) is this, or `"Unknown"`.
    ///
    /// - Parameter response: The response.
    static func serverName(for response: HTTPURLResponse) -> String? {
        if let header = response.value(forHTTPHeaderField: "Content-Disposition"),
            let disposition = ContentDisposition(header)
        {
            for candidate in [disposition.extendedFileName, disposition.plainFileName] {
                if let name = candidate.flatMap(sanitized) {
                    return name
                }
            }
        }
        return response.url.flatMap(lastPathComponent(of:)).flatMap(sanitized)
    }

    /// A name that no server chose: `download-` and a UUID.
    static func unique() -> String {
        "download-\(UUID().uuidString)"
    }

    /// Makes a server-supplied name safe, or refuses it.
    ///
    /// Control characters (`U+0000`-`U+001F`, `U+007F`-`U+009F`) and the bidirectional
    /// formatting characters that can disguise an extension are removed; `\` counts as a path
    /// separator like `/`, and only the last component is kept (`../../etc/passwd` becomes
    /// `passwd`, `C:\x\y` becomes `y`); surrounding spaces are trimmed; a name longer than
    /// ``maximumLength`` bytes is shortened, keeping a short extension. Leading dots stay, so
    /// `.profile` is kept as it is.
    ///
    /// - Parameter name: The name as the server gave it.
    /// - Returns: The cleaned name, or `nil` when nothing usable is left (empty, `.` or `..`).
    static func sanitized(_ name: String) -> String? {
        var cleaned = String.UnicodeScalarView()
        for scalar in name.unicodeScalars where !isRemoved(scalar) {
            cleaned.append(scalar)
        }
        // Split at the scalars, not at `Character`s: a separator followed by a combining mark
        // is one `Character` that is not "/", and would leave a separator inside the name.
        let components = cleaned.split(whereSeparator: { $0 == "/" || $0 == "\\" })
        let lastComponent = components.last.map(String.init) ?? ""
        let trimmed = lastComponent.trimmingCharacters(in: .whitespaces)
        guard isUsable(trimmed) else { return nil }
        let shortened = shortened(trimmed).trimmingCharacters(in: .whitespaces)
        return isUsable(shortened) ? shortened : nil
    }

    /// The last non-empty segment of the URL's path, percent-decoded; `nil` when the path has
    /// none or it does not decode.
    private static func lastPathComponent(of url: URL) -> String? {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        guard let segment = components?.percentEncodedPath.split(separator: "/").last else { return nil }
        return segment.removingPercentEncoding
    }

    /// Whether a cleaned name can be used as it is.
    private static func isUsable(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".."
    }

    /// Whether a scalar is dropped from names: controls, and the bidirectional embeddings,
    /// overrides and isolates (`U+202A`-`U+202E`, `U+2066`-`U+2069`).
    private static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// `name` cut to at most ``maximumLength`` UTF-8 bytes at a character boundary, keeping an
    /// extension of up to 16 bytes (such as `.pdf`) when there is one.
    private static func shortened(_ name: String) -> String {
        guard name.utf8.count > maximumLength else { return name }
        var stem = Substring(name)
        var pathExtension: Substring = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, name.utf8[dot...].count <= 16 {
            stem = name[..<dot]
            pathExtension = name[dot...]
        }
        var budget = maximumLength - pathExtension.utf8.count
        var kept = ""
        for character in stem {
            let length = character.utf8.count
            guard length <= budget else { break }
            kept.append(character)
            budget -= length
        }
        if kept.isEmpty {
            // One huge character (a base with hundreds of combining marks): cut between scalars.
            var scalars = String.UnicodeScalarView()
            for scalar in stem.unicodeScalars {
                let length = UTF8.width(scalar)
                guard length <= budget else { break }
                scalars.append(scalar)
                budget -= length
            }
            kept = String(scalars)
        }
        return kept + pathExtension
    }
}
