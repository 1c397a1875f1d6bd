import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Fuzz target for ContentDisposition and DownloadFileName (Sources/Moya/Bodies).
//
// Input: a `Content-Disposition` header value, then optionally a line feed and the rest of a
// URL path (`https://files.example/` is put in front of it), both decoded as UTF-8.
//
// Properties:
// - a header that parses has a lowercase token as its type and lowercase tokens as parameter
//   names; written back out (tokens as they are, quoted strings quoted and escaped) it parses to
//   the same value; `fileName` is `extendedFileName ?? plainFileName`;
// - every name that `DownloadFileName` makes, from the header's file names, from the raw input,
//   and from a response with that header and URL, is safe: not empty, not `.` or `..`, no `/`
//   or `\`, no control or bidirectional formatting characters, no surrounding white space, at
//   most 255 UTF-8 bytes, unchanged when sanitized again, and appended to a directory it names
//   a file directly inside it.

/// The directory the names are placed in.
private let destination = URL(fileURLWithPath: "/fuzz/destination", isDirectory: true)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = inputBytes(data, size)
    let newline = input.firstIndex(of: UInt8(ascii: "\n"))
    let header = String(decoding: input[..<(newline ?? input.endIndex)], as: UTF8.self)
    let path = newline.map { String(decoding: input[($0 + 1)...], as: UTF8.self) }

    if let disposition = ContentDisposition(header) {
        checkParsed(disposition, header: header)
        for name in [disposition.extendedFileName, disposition.plainFileName].compactMap({ $0 }) {
            checkSanitized(name)
        }
    }
    checkSanitized(header)
    if let path {
        checkSanitized(path)
    }

    let url = path.flatMap { URL(string: "https://files.example/" + $0) } ?? URL(string: "https://files.example/download")!
    if let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Disposition": header]) {
        if let name = DownloadFileName.serverName(for: response) {
            checkSafe(name, from: "the response for \(url.absoluteString.debugDescription) with \(header.debugDescription)")
        }
    }
    return 0
}

/// Checks what a parsed header holds, and that writing it back out gives the same header.
private func checkParsed(_ disposition: ContentDisposition, header: String) {
    require(isLowercaseToken(disposition.type), "type \(disposition.type.debugDescription) of \(header.debugDescription)")
    for name in disposition.parameters.keys {
        require(isLowercaseToken(name), "parameter name \(name.debugDescription) of \(header.debugDescription)")
    }
    require(
        disposition.fileName == (disposition.extendedFileName ?? disposition.plainFileName),
        "file name of \(header.debugDescription)")
    var written = disposition.type
    for (name, value) in disposition.parameters.sorted(by: { $0.key < $1.key }) {
        written += "; \(name)="
        if value.wasQuoted {
            written += "\""
            for scalar in value.text.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { written += "\\" }
                written.unicodeScalars.append(scalar)
            }
            written += "\""
        } else {
            written += value.text
        }
    }
    let reparsed = ContentDisposition(written)
    require(reparsed == disposition, "\(header.debugDescription) written back as \(written.debugDescription) parses to \(String(describing: reparsed))")
}

/// Checks `DownloadFileName.sanitized(_:)` on `name`.
private func checkSanitized(_ name: String) {
    guard let safe = DownloadFileName.sanitized(name) else { return }
    checkSafe(safe, from: name.debugDescription)
}

/// Requires `name` to be a safe file name.
private func checkSafe(_ name: String, from source: @autoclosure () -> String) {
    let context = "\(name.debugDescription) from \(source())"
    require(!name.isEmpty && name != "." && name != "..", "unusable name \(context)")
    require(!name.unicodeScalars.contains { $0 == "/" || $0 == "\\" }, "a path separator in \(context)")
    require(!name.unicodeScalars.contains(where: isForbidden), "a control or formatting character in \(context)")
    require(name.utf8.count <= DownloadFileName.maximumLength, "\(name.utf8.count) bytes in \(context)")
    let scalars = name.unicodeScalars
    require(
        !CharacterSet.whitespaces.contains(scalars.first!) && !CharacterSet.whitespaces.contains(scalars.last!),
        "white space around \(context)")
    let again = DownloadFileName.sanitized(name)
    require(again.map { Array($0.utf8) } == Array(name.utf8), "sanitized again to \(String(describing: again?.debugDescription)): \(context)")
    let file = destination.appendingPathComponent(name, isDirectory: false)
    require(
        file.standardizedFileURL.deletingLastPathComponent().path == destination.path && file.lastPathComponent == name,
        "\(file.path.debugDescription) is not directly in \(destination.path): \(context)")
}

/// The scalars a safe name never holds: controls (U+0000-U+001F, U+007F-U+009F) and the
/// bidirectional embeddings, overrides and isolates.
private func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
}

/// Whether `text` is a non-empty RFC 9110 token without uppercase letters.
private func isLowercaseToken(_ text: String) -> Bool {
    !text.isEmpty
        && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"): return true
            default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
}
