import Foundation
import MoyaTestServer
import Testing

@testable import Moya

@Suite("RequestMultipartFormData: the multipart encoder")
struct MultipartEncoderTests {
    @Test("Parts are laid out with boundaries and headers as Alamofire does")
    func layout() throws {
        let form = RequestMultipartFormData(boundary: "b0und")
        form.append(Data("one".utf8), withName: "first")
        form.append(Data("two".utf8), withName: "second", fileName: "2.txt", mimeType: "text/plain")
        let expected =
            "--b0und\r\n"
            + "Content-Disposition: form-data; name=\"first\"\r\n\r\n"
            + "one"
            + "\r\n--b0und\r\n"
            + "Content-Disposition: form-data; name=\"second\"; filename=\"2.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\n"
            + "two"
            + "\r\n--b0und--\r\n"
        #expect(String(decoding: try form.encode(), as: UTF8.self) == expected)
        #expect(form.contentType == "multipart/form-data; boundary=b0und")
        #expect(form.contentLength == 6)
    }

    @Test("Random boundaries look like Alamofire's and contain no dash")
    func randomBoundary() {
        let boundaries = (0..<20).map { _ in RequestMultipartFormData().boundary }
        #expect(Set(boundaries).count == 20)
        for boundary in boundaries {
            #expect(boundary.hasPrefix("alamofire.boundary."))
            #expect(boundary.count == "alamofire.boundary.".count + 16)
            #expect(!boundary.contains("-"))
        }
    }

    @Test("Moya's parts convert as in Moya: lone file names ignored, stream parts always named")
    func moyaConversion() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("notes.txt", length: 5)
        let form = MultipartForm(
            boundary: "x",
            parts: [
                MultipartFormData(provider: .file(file), name: "a", fileName: "ignored.bin"),
                MultipartFormData(provider: .stream(InputStream(data: Data("hey".utf8)), 3), name: "s"),
            ])
        let body = String(decoding: try RequestMultipartFormData(form).encode(), as: UTF8.self)
        #expect(body.contains("Content-Disposition: form-data; name=\"a\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\n"))
        #expect(body.contains("Content-Disposition: form-data; name=\"s\"; filename=\"\"\r\nContent-Type: \r\n\r\nhey\r\n--x--\r\n"))
    }

    @Test("Stream parts with custom headers keep their order")
    func streamHeaders() throws {
        let form = RequestMultipartFormData(boundary: "z")
        form.append(InputStream(data: Data("abc".utf8)), withLength: 3, headers: ["Content-Disposition": "form-data; name=\"raw\"", "X-Extra": "1"])
        #expect(
            String(decoding: try form.encode(), as: UTF8.self)
                == "--z\r\nContent-Disposition: form-data; name=\"raw\"\r\nX-Extra: 1\r\n\r\nabc\r\n--z--\r\n")
    }

    @Test("Common extensions map to MIME types; unknown ones to application/octet-stream")
    func mimeTypes() {
        #expect(MIMEType.forPathExtension("PNG") == "image/png")
        #expect(MIMEType.forPathExtension("json") == "application/json")
        #expect(MIMEType.forPathExtension("jpeg") == "image/jpeg")
        #expect(MIMEType.forPathExtension("mp4") == "video/mp4")
        #expect(MIMEType.forPathExtension("xyz123") == "application/octet-stream")
    }

    @Test("Problems recorded while appending surface when encoding")
    func deferredErrors() throws {
        let directory = try TemporaryDirectory()
        let form = RequestMultipartFormData()
        form.append(directory.file("missing.png"), withName: "f")
        form.append(Data("ok".utf8), withName: "later")
        #expect { try form.encode() } throws: { error in
            if case .fileNotFound? = error as? FileTransferError { return true }
            return false
        }
        let noName = RequestMultipartFormData()
        noName.append(directory.url.appendingPathComponent("Makefile"), withName: "f")
        #expect(throws: MultipartEncodingError.bodyPartFilenameInvalid(in: directory.url.appendingPathComponent("Makefile"))) { try noName.encode() }
    }

    @Test("writeEncodedData writes the same bytes as encode and refuses to overwrite")
    func writeToFile() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("part.bin", length: 300_000)
        let form = RequestMultipartFormData(boundary: "w")
        form.append(file, withName: "file")
        form.append(Data("tail".utf8), withName: "t")
        let output = directory.file("form.out")
        try form.writeEncodedData(to: output)
        #expect(try Data(contentsOf: output) == (try form.encode()))
        #expect(throws: (any Error).self) { try form.writeEncodedData(to: output) }
    }
}

@Suite("RequestMultipartFormData: names that could break the form")
struct MultipartEscapingTests {
    @Test("Quotes, CR and LF in names, file names, types and custom headers are escaped as browsers do")
    func escaping() throws {
        let form = RequestMultipartFormData(boundary: "b")
        form.append(Data("v".utf8), withName: "a\"\r\nContent-Type: text/evil", fileName: "x\".txt\r\n\r\ninjected", mimeType: "text/plain\r\nX-Evil: 1")
        form.append(InputStream(data: Data("s".utf8)), withLength: 1, headers: ["Content-Disposition": "form-data; name=\"s\"\r\nX-Evil: 2"])
        let body = String(decoding: try form.encode(), as: UTF8.self)
        #expect(body.contains(#"Content-Disposition: form-data; name="a%22%0D%0AContent-Type: text/evil"; filename="x%22.txt%0D%0A%0D%0Ainjected""#))
        #expect(body.contains("Content-Type: text/plain%0D%0AX-Evil: 1\r\n"))
        #expect(body.contains("Content-Disposition: form-data; name=\"s\"%0D%0AX-Evil: 2\r\n"))
        #expect(!body.contains("\r\nX-Evil"))
        #expect(!body.contains("\r\nContent-Type: text/evil"))
    }
}
