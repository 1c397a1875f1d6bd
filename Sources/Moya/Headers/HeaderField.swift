import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Header helpers for error messages and for values Foundation would drop.
enum HeaderField {
    /// `name` quoted for an error message: up to its first character that is not allowed in a
    /// name, followed by `…` when something was cut (so that a value pasted into the name, such
    /// as `Authorization: Bearer …`, is not shown).
    static func displayName(_ name: String) -> String {
        let valid = name.utf8.prefix(while: HTTPSyntax.isTokenCharacter)
        let shown = String(decoding: valid, as: UTF8.self)
        return "\"\(shown)\(valid.count < name.utf8.count ? "…" : "")\""
    }
}

extension URLRequest {
    /// Sets the header `name` to `value`, as `setValue(_:forHTTPHeaderField:)` does, except
    /// that a value Foundation would silently ignore (one with CR, LF or NUL) is kept, so that
    /// the transport refuses the request with ``RequestValidationError/invalidHeaderValue(name:)``
    /// instead of sending it without the header.
    mutating func setHeaderKeepingInvalidValue(_ value: String, forName name: String) {
        guard !HTTPSyntax.isFieldValue(value) else {
            setValue(value, forHTTPHeaderField: name)
            return
        }
        var fields = allHTTPHeaderFields ?? [:]
        for existing in fields.keys where existing.caseInsensitiveCompare(name) == .orderedSame {
            fields.removeValue(forKey: existing)
        }
        fields[name] = value
        allHTTPHeaderFields = fields
    }
}
