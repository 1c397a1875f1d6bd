import Foundation

// Fuzz target for CacheControl, CacheHTTPDate and CacheHeaderFields (Sources/Moya/Caching).
//
// Input: up to eight `Cache-Control` field values separated by line feeds, decoded as UTF-8; each
// is also read as an HTTP date.
//
// Properties:
// - directive names are lowercase, not empty, without `,` or `=` and without surrounding spaces
//   or tabs; `max-age` and `min-fresh` are between 0 and 2^31, `max-stale` too or `Int.max`
//   (any staleness);
// - several field values mean what they mean joined with commas (RFC 9110 section 5.3), when no
//   value has a quote (a quoted string may hold a comma) and no value ends inside an argument;
//   and the first occurrence of a directive wins;
// - `CacheHeaderFields.normalized` is idempotent;
// - a date CacheHTTPDate reads is a whole second of the years 1 to 9999, and its IMF-fixdate
//   form reads back to the same date.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = inputBytes(data, size)
    let values = input.split(separator: UInt8(ascii: "\n"), maxSplits: 7, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    let control = CacheControl(values)
    checkDirectives(control, values)

    if !values.contains(where: { $0.unicodeScalars.contains("\"") }) {
        let joined = CacheControl([values.joined(separator: ",")])
        require(joined == control, "\(values) joined: \(joined.directives) instead of \(control.directives)")
    }
    // The first occurrence wins: the directives of the first value are kept whatever follows.
    let first = CacheControl([values[0]])
    for (name, argument) in first.directives {
        require(control.directives[name].map { $0 == argument } == true, "\(name) of \(values[0].debugDescription) changed by \(values.dropFirst())")
    }

    let fields = values.map { (name: "Vary", value: $0) }
    if let normalized = CacheHeaderFields.normalized("vary", in: fields) {
        let again = CacheHeaderFields.normalized("VARY", in: [(name: "vary", value: normalized)])
        require(again == normalized, "normalized \(values): \(normalized.debugDescription), then \(String(describing: again?.debugDescription))")
    }

    for value in values {
        guard let date = CacheHTTPDate.parse(value) else { continue }
        let seconds = date.timeIntervalSince1970
        // 0001-01-01T00:00:00Z and 9999-12-31T23:59:60Z.
        require(seconds >= -62_135_596_800 && seconds <= 253_402_300_800 && seconds == seconds.rounded(), "\(date) from \(value.debugDescription)")
        let written = CacheHTTPDate.format(date)
        let reread = CacheHTTPDate.parse(written)
        require(
            reread == date || seconds == 253_402_300_800,
            "\(date) from \(value.debugDescription) written \(written.debugDescription) reads as \(String(describing: reread))")
    }
    return 0
}

/// Checks the directives and the delta-seconds values.
private func checkDirectives(_ control: CacheControl, _ values: [String]) {
    for name in control.directives.keys {
        let bytes = Array(name.utf8)
        require(
            !bytes.isEmpty && name == name.lowercased() && !bytes.contains(UInt8(ascii: ",")) && !bytes.contains(UInt8(ascii: "="))
                && ![UInt8(ascii: " "), 0x09].contains(bytes.first!) && ![UInt8(ascii: " "), 0x09].contains(bytes.last!),
            "directive name \(name.debugDescription) in \(values)")
    }
    let range = 0...CacheControl.maximumDeltaSeconds
    require(control.maxAge.map(range.contains) ?? true, "max-age \(String(describing: control.maxAge)) in \(values)")
    require(control.minFresh.map(range.contains) ?? true, "min-fresh \(String(describing: control.minFresh)) in \(values)")
    require(control.maxStale.map { range.contains($0) || $0 == Int.max } ?? true, "max-stale \(String(describing: control.maxStale)) in \(values)")
}
