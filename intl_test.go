package airlock_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/airlockrun/airlock"
)

// Intl is written in JavaScript, in the snapshot; like the built-ins it
// stands for, it must not change when a program replaces the array
// methods it uses (it captured them before any program ran).
func TestIntlIgnoresTamperedPrototypes(t *testing.T) {
	res, err := airlock.Eval(context.Background(), `
		Array.prototype.includes = () => false;
		Array.prototype.filter = () => [];
		Array.prototype.sort = function () { return this; };
		Array.prototype[Symbol.iterator] = function* () {};
		export default [new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(5),
			new Intl.RelativeTimeFormat().format(-1, 'days'), new Intl.Locale('en-US').baseName,
			Intl.supportedValuesOf('currency')[0], 'b'.localeCompare('a'),
			new Date(0).toLocaleString('en-US', { timeZone: 'America/New_York', timeZoneName: 'short' })]`,
		airlock.Options{Language: airlock.JavaScript})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("%s: %s", res.Error.Name, res.Error.Message)
	}
	want := []any{"$5.00", "1 day ago", "en-US", "AUD", 1.0, "12/31/1969, 7:00:00 PM EST"}
	if !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("got %#v, want %#v", res.Result, want)
	}
}

// A time zone name that names the host's configuration, not a zone of the
// IANA database, is invalid, as any unknown zone is: localtime (a link to
// the host's zone in many zone directories) used to pass the name check
// and give the host's zone, which the check meant to refuse as it refused
// Local. Names are now those of the database Go ships, whatever the host's
// zone directory holds.
func TestIntlRefusesHostZoneNames(t *testing.T) {
	for _, zone := range []string{"localtime", "Local", "posixrules", "Factory", "posix/Europe/Paris",
		"right/UTC", "/etc/localtime", "Etc/../UTC", "../../etc/passwd", "zone.tab", "tzdata.zi", "Nowhere/Zone"} {
		res, err := airlock.Eval(context.Background(), `
			let msg = "accepted";
			try { new Intl.DateTimeFormat("en-US", { timeZone: zone }).format(0); }
			catch (e) { msg = e.name + ": " + e.message; }
			export default msg;`,
			airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"zone": zone}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Error != nil {
			t.Fatalf("%s: %s: %s", zone, res.Error.Name, res.Error.Message)
		}
		if want := "RangeError: Invalid time zone specified: " + zone; res.Result != want {
			t.Errorf("timeZone %q: %v, want %q", zone, res.Result, want)
		}
	}
	// The database's names, links included, still resolve.
	res, err := airlock.Eval(context.Background(), `export default ["America/New_York", "US/Eastern", "Etc/GMT+5", "UTC"].map(
		(timeZone) => new Date(0).toLocaleString("en-US", { timeZone, timeZoneName: "short" }))`,
		airlock.Options{Language: airlock.JavaScript})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"12/31/1969, 7:00:00 PM EST", "12/31/1969, 7:00:00 PM EST", "12/31/1969, 7:00:00 PM GMT-5", "1/1/1970, 12:00:00 AM UTC"}
	if res.Error != nil || !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("got %#v (%v), want %#v", res.Result, res.Error, want)
	}
}

// Regression tests from test262's intl402 (checked with Node where it
// agrees with the specification): what Intl returns or builds is made with
// data properties, so setters a program put on Object.prototype or
// Array.prototype are not called; null is no list of locales; a tag is
// checked for structural validity (no "_", no empty extension, no -u- key
// with a digit second, no -t- without a field value); supportedLocalesOf reads
// its localeMatcher; the constructors' prototype is not writable;
// PluralRules reads localeMatcher and notation; an option that is a Symbol
// is a TypeError; toLocaleLowerCase and toLocaleUpperCase check their
// locales; a list of locales has a length as ToLength reads it; Intl.Locale
// applies its language, script and region options (values as Node gives).
func TestIntlAsTheStandardSays(t *testing.T) {
	checkJS(t, checkPrelude+`
		let called = [];
		for (const k of ["locale", "weekday", "minimumFractionDigits", "type", "pluralCategories", "0", "1"]) {
			Object.defineProperty(Object.prototype, k, { set(v) { called.push(k) }, configurable: true });
		}
		new Intl.NumberFormat("en").resolvedOptions();
		new Intl.DateTimeFormat("en", { weekday: "long" }).resolvedOptions();
		new Intl.PluralRules("en").resolvedOptions();
		Intl.NumberFormat.supportedLocalesOf(["en", "en-US"]);
		eq(called.join(), "", "setters called");
		for (const k of ["locale", "weekday", "minimumFractionDigits", "type", "pluralCategories", "0", "1"]) delete Object.prototype[k];

		throws(() => new Intl.NumberFormat(null), "TypeError", "NumberFormat(null)");
		throws(() => (1).toLocaleString(null), "TypeError", "toLocaleString(null)");
		throws(() => Intl.Collator.supportedLocalesOf(null), "TypeError", "supportedLocalesOf(null)");
		for (const tag of ["de_DE", "en-u", "en-u-u", "cmn-hans-cn-u-u", "en-u-a1", "en-t", "en-t-a1", "en-a-x", "en-x", "en--US", "x-private", "en-US-US", "de-1996-1996"]) {
			throws(() => Intl.getCanonicalLocales(tag), "RangeError", "getCanonicalLocales(" + JSON.stringify(tag) + ")");
		}
		eq(Intl.getCanonicalLocales("EN-latn-us-u-CA-gregory-x-Private").join(), "en-Latn-US-u-ca-gregory-x-private", "canonical");
		eq(Intl.getCanonicalLocales("en-t-de-h0-hybrid").join(), "en-t-de-h0-hybrid", "a -t- extension");
		throws(() => Intl.NumberFormat.supportedLocalesOf("en", { localeMatcher: null }), "RangeError", "localeMatcher null");
		for (const C of [Intl.Collator, Intl.DateTimeFormat, Intl.NumberFormat, Intl.PluralRules]) desc(C, "prototype", false, false, false, C.name + ".prototype");
		eq(new Intl.PluralRules("en", { notation: "compact" }).resolvedOptions().notation, "compact", "notation");
		eq(Object.keys(new Intl.PluralRules("en").resolvedOptions()).slice(0, 3).join(), "locale,type,notation", "resolvedOptions' order");
		throws(() => new Intl.PluralRules("en", { notation: "COMPACT" }), "RangeError", "notation COMPACT");
		throws(() => new Intl.PluralRules("en", { get localeMatcher() { throw new SyntaxError("read") } }), "SyntaxError", "localeMatcher read");
		throws(() => new Intl.PluralRules("en", { notation: Symbol() }), "TypeError", "a Symbol option");
		throws(() => "".toLocaleLowerCase(["en-US", "not a tag"]), "RangeError", "toLocaleLowerCase's locales");
		throws(() => "".toLocaleUpperCase("en_US"), "RangeError", "toLocaleUpperCase's locales");
		eq("ÄB".toLocaleLowerCase("en") + "äb".toLocaleUpperCase(), "äbÄB", "casing");
		eq(String.prototype.toLocaleLowerCase.length + String.prototype.toLocaleUpperCase.name, "0toLocaleUpperCase", "their shape");
		eq(Intl.getCanonicalLocales({ length: -(2 ** 32) + 1, get 0() { throw new Error("read") } }).length, 0, "a negative length");
		const locs = [];
		for (const [tag, o] of [["de", {language: "it"}], ["en-US", {script: "Latn"}], ["en-Latn-US-u-ca-gregory", {region: "GB", language: "fr"}], ["zh", {script: "hans", region: "cn"}]]) locs.push(new Intl.Locale(tag, o).toString());
		eq(locs.join(), "it,en-Latn-US,fr-Latn-GB-u-ca-gregory,zh-Hans-CN", "Intl.Locale's language, script and region");
		for (const o of [{language: "it\0biscotto"}, {script: "Thai\0x"}, {region: "GB\0biscuit"}, {language: "a"}]) throws(() => new Intl.Locale("de", o), "RangeError", "Intl.Locale " + JSON.stringify(o));
		export default bad`)
}
