import Foundation

extension RequestMultipartFormData {
    /// Creates the encoder for one of Moya's forms, with its file manager and boundary.
    convenience init(_ form: MultipartForm) {
        self.init(fileManager: form.fileManager, boundary: form.boundary)
        applyMoyaMultipartFormData(form.parts)
    }

    /// Appends Moya's body parts, as Moya does:
    /// - `.data` parts keep their optional file name and MIME type;
    /// - `.file` parts use the explicit file name and MIME type only when both are given, and
    ///   otherwise derive both from the URL (a lone file name is ignored);
    /// - `.stream` parts always carry `filename` and `Content-Type`, empty when not given.
    func applyMoyaMultipartFormData(_ parts: [MultipartFormData]) {
        for part in parts {
            switch part.provider {
            case .data(let data):
                append(data, withName: part.name, fileName: part.fileName, mimeType: part.mimeType)
            case .file(let url):
                if let fileName = part.fileName, let mimeType = part.mimeType {
                    append(url, withName: part.name, fileName: fileName, mimeType: mimeType)
                } else {
                    append(url, withName: part.name)
                }
            case .stream(let stream, let length):
                append(stream, withLength: length, name: part.name, fileName: part.fileName ?? "", mimeType: part.mimeType ?? "")
            }
        }
    }
}
