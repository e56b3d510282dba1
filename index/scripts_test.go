package index

import (
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"
)

// scriptTalks are sessions in scripts and forms that a user types
// differently from how the text was written: Thai without spaces between
// words, Turkish dotted and dotless i, full-width and half-width forms,
// ligatures, letters with a stroke, Russian ё, Korean in NFD (as macOS
// pastes it), emoji.
var scriptTalks = []talk{
	{ID: "s-th", CWD: "/home/u/th", Start: day, Turns: [][2]string{
		{"ช่วยทำให้บริการนี้เสถียรขึ้นและย้ายฐานข้อมูลไปเครื่องใหม่", "ฉันชอบกินข้าวผัด"},
	}},
	{ID: "s-lo", CWD: "/home/u/lo", Start: day.Add(time.Minute), Turns: [][2]string{
		{"ພາສາລາວບໍ່ມີຍະຫວ່າງ", "ຂອບໃຈຫຼາຍໆ"},
	}},
	{ID: "s-km", CWD: "/home/u/km", Start: day.Add(2 * time.Minute), Turns: [][2]string{
		{"ខ្ញុំចង់រៀនភាសាខ្មែរ", "អរគុណ"},
	}},
	{ID: "s-my", CWD: "/home/u/my", Start: day.Add(3 * time.Minute), Turns: [][2]string{
		{"မြန်မာဘာသာစကားကိုလေ့လာနေသည်", "ကျေးဇူးတင်ပါတယ်"},
	}},
	{ID: "s-hi", CWD: "/home/u/hi", Start: day.Add(4 * time.Minute), Turns: [][2]string{
		{"कृपया सर्वर को पुनः आरंभ करें", "ठीक है"},
	}},
	{ID: "s-tr", CWD: "/home/u/tr", Start: day.Add(5 * time.Minute), Turns: [][2]string{
		{"DİYARBAKIR deposu hazır", "ılık bir gün, Iğdır"},
	}},
	{ID: "s-compat", CWD: "/home/u/compat", Start: day.Add(6 * time.Minute), Turns: [][2]string{
		{"ＨＥＬＬＯ again, ｄｅｐｌｏｙ now", "the ｻｰﾊﾞｰ is up; ﬁle ﬂow, cœur, Cæsar"},
	}},
	{ID: "s-plain", CWD: "/home/u/plain", Start: day.Add(7 * time.Minute), Turns: [][2]string{
		{"hello from the サーバー", "deploy the file, flow of oeuvre, aesthetic"},
	}},
	{ID: "s-stroke", CWD: "/home/u/stroke", Start: day.Add(8 * time.Minute), Turns: [][2]string{
		{"Đà Nẵng, Łódź and Ørsted", "ħ ŧ: Ħamrun Ŧest; ещё Ёлка"},
	}},
	{ID: "s-ko-nfd", CWD: "/home/u/kond", Start: day.Add(9 * time.Minute), Turns: [][2]string{
		{norm.NFD.String("데이터베이스를 백업했습니다"), "ok"},
	}},
	{ID: "s-ko-nfc", CWD: "/home/u/konc", Start: day.Add(10 * time.Minute), Turns: [][2]string{
		{"서버를 재시작했습니다", "ok"},
	}},
	{ID: "s-emoji", CWD: "/home/u/emoji", Start: day.Add(11 * time.Minute), Turns: [][2]string{
		{"released 🎉🎉 at last", "👍🏽 and 👨‍💻, ❤️ 🇯🇵"},
	}},
}

// TestSearchScripts searches words typed as a user types them, each found
// in the session that holds them in another form, and the hit's line and
// snippet hold the text found.
func TestSearchScripts(t *testing.T) {
	nfdKo := norm.NFD.String
	checkSearches(t, scriptTalks, []searchCase{
		// Thai, Lao, Khmer, Myanmar: words inside a sentence.
		{"เสถียร", []string{"s-th"}, nil},
		{"ฐานข้อมูล", []string{"s-th"}, nil},
		{"ชอบ", []string{"s-th"}, nil},
		{"ข้าว", []string{"s-th"}, nil},
		{"ข้าวผัด", []string{"s-th"}, nil},
		{"ขาว", nil, nil}, // without its tone mark, another word
		{"ລາວ", []string{"s-lo"}, nil},
		{"ຂອບໃຈ", []string{"s-lo"}, nil},
		{"ភាសា", []string{"s-km"}, nil},
		{"ខ្មែរ", []string{"s-km"}, nil},
		{"ဘာသာ", []string{"s-my"}, nil},
		{"ကျေးဇူး", []string{"s-my"}, nil},
		// Devanagari: marks are inside the word.
		{"सर्वर", []string{"s-hi"}, nil},
		{"पुनः", []string{"s-hi"}, nil},
		{"आरंभ", []string{"s-hi"}, nil},
		// Turkish dotted and dotless i.
		{"diyarbakır", []string{"s-tr"}, []string{"DİYARBAKIR"}},
		{"diyarbakir", []string{"s-tr"}, []string{"DİYARBAKIR"}},
		{"ILIK", []string{"s-tr"}, []string{"ılık"}},
		{"ığdır", []string{"s-tr"}, []string{"Iğdır"}},
		{"igdir", []string{"s-tr"}, []string{"Iğdır"}},
		{"IĞDIR", []string{"s-tr"}, []string{"Iğdır"}},
		{"hazir", []string{"s-tr"}, []string{"hazır"}},
		// Compatibility forms, both ways.
		{"hello", []string{"s-compat", "s-plain"}, []string{"ＨＥＬＬＯ", "hello"}},
		{"ＨＥＬＬＯ", []string{"s-compat", "s-plain"}, []string{"ＨＥＬＬＯ", "hello"}},
		{"deploy", []string{"s-compat", "s-plain"}, []string{"ｄｅｐｌｏｙ", "deploy"}},
		{"ｄｅｐｌｏｙ", []string{"s-compat", "s-plain"}, []string{"ｄｅｐｌｏｙ", "deploy"}},
		{"サーバー", []string{"s-compat", "s-plain"}, []string{"ｻｰﾊﾞｰ", "サーバー"}},
		{"ｻｰﾊﾞｰ", []string{"s-compat", "s-plain"}, []string{"ｻｰﾊﾞｰ", "サーバー"}},
		{"file flow", []string{"s-compat", "s-plain"}, []string{"ﬁle", "file"}},
		{"ﬁle", []string{"s-compat", "s-plain"}, []string{"ﬁle", "file"}},
		{"coeur caesar", []string{"s-compat"}, []string{"cœur"}},
		{"œuvre", []string{"s-plain"}, []string{"oeuvre"}},
		{"æsthetic", []string{"s-plain"}, []string{"aesthetic"}},
		// Latin letters with a stroke; Cyrillic ё.
		{"da nang", []string{"s-stroke"}, []string{"Đà Nẵng"}},
		{"lodz", []string{"s-stroke"}, []string{"Łódź"}},
		{"orsted", []string{"s-stroke"}, []string{"Ørsted"}},
		{"hamrun test", []string{"s-stroke"}, []string{"Ħamrun"}},
		{"еще елка", []string{"s-stroke"}, []string{"ещё"}},
		{"ЕЩЁ", []string{"s-stroke"}, []string{"ещё"}},
		// Korean in NFD finds NFC and back.
		{"데이터베이스", []string{"s-ko-nfd"}, []string{nfdKo("데이터베이스")}},
		{"백업", []string{"s-ko-nfd"}, []string{nfdKo("백업")}},
		{nfdKo("재시작"), []string{"s-ko-nfc"}, []string{"재시작"}},
		{nfdKo("서버"), []string{"s-ko-nfc"}, []string{"서버"}},
		// Emoji: each one a word, modifiers and variation selectors folded away.
		{"🎉", []string{"s-emoji"}, nil},
		{"👍", []string{"s-emoji"}, []string{"👍🏽"}},
		{"👍🏿", []string{"s-emoji"}, []string{"👍🏽"}},
		{"👨‍💻", []string{"s-emoji"}, nil},
		{"❤", []string{"s-emoji"}, nil},
		{"🇯🇵", []string{"s-emoji"}, nil},
		{`"🎉 🎉"`, []string{"s-emoji"}, []string{"🎉🎉"}},
		{`"🎉 👍"`, nil, nil},
		{"💻", nil, nil}, // only inside 👨‍💻, which is one emoji
	})
}
