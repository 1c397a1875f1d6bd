import Foundation

extension CookieJar {
    /// The `Cookie` header of a request to `url` that already carries `existing` (its own
    /// `Cookie` header, if any): the jar's cookies for the URL added after the request's, except
    /// those whose names the request sets itself; `existing` alone when the jar has none to add.
    func cookieHeader(for url: URL, adding existing: String?) -> String? {
        guard let stored = cookieHeader(for: url) else {
            return existing
        }
        guard let existing, !existing.isEmpty else { return stored }
        let ownNames = Set(
            existing.split(separator: ";").compactMap { pair -> Substring? in
                let name = pair.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces)
                return name.map { Substring($0) }
            })
        let added = stored.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return !ownNames.contains(Substring(name))
        }
        return added.isEmpty ? existing : ([existing] + added).joined(separator: "; ")
    }
}
