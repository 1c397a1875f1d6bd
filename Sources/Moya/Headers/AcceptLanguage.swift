import Foundation

/// The `Accept-Language` a session sends by default (see ``Session/defaultHTTPHeaders``): the
/// user's preferred languages, at most six, each a tenth less preferred than the one before
/// (`de-DE;q=1.0, en;q=0.9`).
///
/// On Apple platforms the languages are Foundation's `Locale.preferredLanguages`, as in
/// Alamofire. Elsewhere they come from the POSIX locale variables, the way gettext picks a
/// program's language: `LANGUAGE` (a list separated by colons), unless the locale is `C` or
/// `POSIX`, and otherwise the locale itself, from `LC_ALL`, `LC_MESSAGES` or `LANG`, the first
/// one set. (Foundation on Linux answers `en-001` whatever those variables say, and working that
/// out brings more than a mebibyte of its code into memory.) A process without a language, or in
/// the `C` locale, sends `en;q=1.0`.
enum AcceptLanguage {
    /// The most languages the header names.
    static let maximumCount = 6

    /// The default session's value, worked out once.
    static let current: String = value(for: preferredLanguages())

    /// The header's value for `languages`, most preferred first; `en;q=1.0` for none.
    static func value(for languages: [String]) -> String {
        let languages = languages.prefix(maximumCount)
        guard !languages.isEmpty else { return "en;q=1.0" }
        return languages.enumerated().map { index, language in
            "\(language);q=\(1.0 - Double(index) * 0.1)"
        }.joined(separator: ", ")
    }

    /// The user's preferred languages, most preferred first.
    static func preferredLanguages() -> [String] {
        #if canImport(Darwin)
        return Locale.preferredLanguages
        #else
        return posixLanguages(environment: ProcessEnvironment.variable)
        #endif
    }

    /// The languages the POSIX locale variables name, read through `environment`, as language
    /// tags (`de_DE.UTF-8@euro` is `de-DE`), without repeats; none for the `C` locale.
    static func posixLanguages(environment: (String) -> String?) -> [String] {
        var locale: String?
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment(name), !value.isEmpty {
                locale = value
                break
            }
        }
        guard let locale, let tag = languageTag(locale) else { return [] }
        var languages: [String] = []
        let list = environment("LANGUAGE") ?? ""
        for name in list.split(separator: ":") {
            if let tag = languageTag(String(name)), !languages.contains(tag) {
                languages.append(tag)
            }
        }
        return languages.isEmpty ? [tag] : languages
    }

    /// `name`, a POSIX locale name (`language[_territory][.codeset][@modifier]`), as a language
    /// tag (`language[-territory]`); `nil` for `C`, `POSIX` and names that are not a language.
    static func languageTag(_ name: String) -> String? {
        let base = name.prefix { $0 != "." && $0 != "@" }
        let parts = base.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        let language = parts[0]
        guard (2...3).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            // `C`, `POSIX` and anything else that names no language.
            return nil
        }
        guard parts.count == 2 else { return language.lowercased() }
        let territory = parts[1]
        let isRegion =
            (territory.count == 2 && territory.allSatisfy { $0.isASCII && $0.isLetter })
            || (territory.count == 3 && territory.allSatisfy { $0.isASCII && $0.isNumber })
        return isRegion ? "\(language.lowercased())-\(territory.uppercased())" : language.lowercased()
    }
}
