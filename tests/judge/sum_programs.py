"""Tiny stdio programs in six languages, and a task built around them."""

from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

# Programs that read n then n integers and print their sum: (correct, wrong, crash, no-compile).
PROGRAMS = {
    Language.PYTHON: (
        "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n",
        "print(42)\n",
        "import sys\nraise SystemExit(3)\n",
        "def broken(:\n",
    ),
    Language.C: (
        '#include <stdio.h>\nint main(){long n,x,s=0;scanf("%ld",&n);'
        'while(n--){scanf("%ld",&x);s+=x;}printf("%ld\\n",s);return 0;}\n',
        '#include <stdio.h>\nint main(){printf("42\\n");return 0;}\n',
        "#include <stdlib.h>\nint main(){int *p = 0; return *p;}\n",
        "int main( { return 0; }\n",
    ),
    Language.JAVA: (
        "import java.util.*;\npublic class Main{public static void main(String[] a){"
        "Scanner s=new Scanner(System.in);long n=s.nextLong(),t=0;for(long i=0;i<n;i++)t+=s.nextLong();"
        "System.out.println(t);}}\n",
        'public class Main{public static void main(String[] a){System.out.println("42");}}\n',
        'public class Main{public static void main(String[] a){throw new RuntimeException("x");}}\n',
        "public class Main{ void x( }\n",
    ),
    Language.GO: (
        'package main\nimport "fmt"\nfunc main(){var n,x,s int64;fmt.Scan(&n);'
        "for i:=int64(0);i<n;i++{fmt.Scan(&x);s+=x};fmt.Println(s)}\n",
        'package main\nimport "fmt"\nfunc main(){fmt.Println(42)}\n',
        'package main\nfunc main(){panic("boom")}\n',
        "package main\nfunc main( {}\n",
    ),
    Language.JAVASCRIPT: (
        "const d=require('fs').readFileSync(0,'utf8').split(/\\s+/).filter(Boolean).map(Number);"
        "console.log(d.slice(1).reduce((a,b)=>a+b,0));\n",
        "console.log(42);\n",
        "throw new Error('boom');\n",
        "function (\n",
    ),
    Language.RUST: (
        "use std::io::Read;\nfn main(){let mut s=String::new();std::io::stdin().read_to_string(&mut s)"
        ".unwrap();let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();"
        'println!("{}",v[1..].iter().sum::<i64>());}\n',
        'fn main(){println!("42");}\n',
        'fn main(){panic!("boom");}\n',
        "fn main( {}\n",
    ),
}

FENCE = {Language.PYTHON: "python", Language.C: "c", Language.JAVA: "java", Language.GO: "go",
         Language.JAVASCRIPT: "javascript", Language.RUST: "rust"}  # fmt: skip


def sum_task(language: Language) -> Task:
    correct = PROGRAMS[language][0]
    return Task(
        id=f"sum-{language.value}",
        family="parsing",
        language=language,
        kind=TaskKind.STDIO,
        goal="Print the sum of n integers.",
        baseline=Solution(label="baseline", source=correct),
        references=[Solution(label="reference", source=correct)],
        tests=[
            TestCase(id="t1", stdin="3\n1 2 3\n", expected="6"),
            TestCase(id="t2", stdin="1\n-5\n", expected="-5"),
        ],
        workloads=[TestCase(id="w1", stdin="4\n10 20 30 40\n")],
        oracle=Oracle(kind="tokens"),
    )
